// Unit tests: a run's output files (exec/output_sink) — made with the first byte, the
// transcript holding both streams in order and stdout.log stdout alone.
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

TEST_CASE("the output sink makes its files with the first byte and keeps the streams apart",
          "[exec][output]") {
  char tmpl[] = "/tmp/cvoXXXXXX";
  REQUIRE(mkdtemp(tmpl));
  std::string dir = std::string(tmpl) + "/dispatches/7";  // made with the first byte
  {
    exec::OutputSink silent(dir + "/transcript.log", dir + "/stdout.log", 0);
    silent.Store(true, "");
    silent.Store(false, "");
    silent.Close();
    CHECK_FALSE(std::filesystem::exists(dir));  // a silent run leaves no files
  }
  exec::OutputSink sink(dir + "/transcript.log", dir + "/stdout.log", 0);
  sink.Store(true, "one ");
  sink.Store(false, "warn\n");
  sink.Store(true, "two\n");
  sink.Close();
  CHECK(Slurp(dir + "/transcript.log") == "one warn\ntwo\n");
  CHECK(Slurp(dir + "/stdout.log") == "one two\n");
  std::filesystem::remove_all(tmpl);
}

}  // namespace
