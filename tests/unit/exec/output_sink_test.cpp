// Unit tests: a run's output on its way to disk (exec/output_sink) — redacted across chunk
// boundaries, transcript and stdout.log apart, stderr's tail bounded, no files for silence.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "exec/output_sink.h"

using namespace conclave;

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_CASE("the output sink redacts a secret split across chunks and keeps the streams apart",
          "[exec][output]") {
  char tmpl[] = "/tmp/cvoXXXXXX";
  REQUIRE(mkdtemp(tmpl));
  std::string dir = std::string(tmpl) + "/dispatches/7";  // made with the first byte
  const std::string secret = "sk-test-0123456789abcdef";
  {
    exec::OutputSink silent(dir + "/transcript.log", dir + "/stdout.log", {secret}, 0);
    silent.EndStream(true);
    silent.EndStream(false);
    silent.Close();
    CHECK_FALSE(std::filesystem::exists(dir));  // a silent run leaves no files
  }
  exec::OutputSink sink(dir + "/transcript.log", dir + "/stdout.log", {secret}, 0);
  std::string released = sink.Write(true, "key=" + secret.substr(0, 10));
  released += sink.Write(false, "warn\n");
  released += sink.Write(true, secret.substr(10) + " done\n");
  released += sink.EndStream(true);
  sink.Write(false, std::string(20000, 'e') + "LAST");
  released += sink.EndStream(false);
  sink.Close();
  std::string transcript = Slurp(dir + "/transcript.log");
  std::string out = Slurp(dir + "/stdout.log");
  CHECK(transcript.find(secret) == std::string::npos);
  CHECK(out.find(secret) == std::string::npos);
  CHECK(released.find(secret) == std::string::npos);
  CHECK(out.rfind("key=", 0) == 0);
  CHECK(out.find(" done\n") != std::string::npos);
  CHECK(out.find("warn") == std::string::npos);  // stderr only in the transcript
  CHECK(transcript.find("warn\n") != std::string::npos);
  CHECK(sink.stderr_tail().size() <= 8192);
  CHECK(sink.stderr_tail().size() > 8000);
  CHECK(sink.stderr_tail().substr(sink.stderr_tail().size() - 4) == "LAST");
  std::filesystem::remove_all(tmpl);
}

}  // namespace
