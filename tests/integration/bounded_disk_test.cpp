// Integration: bounded disk with a real daemon and real workers — a dispatch's logs are capped
// on disk (head + tail, with a marker naming what was cut) while the result is still parsed
// from the end of the output.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "daemon_fixture.h"

using conclave::testing::DaemonFixture;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

void StartWith(DaemonFixture& d, const json& config) {
  d.WriteProfile("fake", d.FakeProfile("fake", "fakefam"));
  d.Start({"--config", d.WriteFile("config.json", config.dump())});
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
}

// Dispatches brief to w1; returns the daemon's worker_done message.
json Run(DaemonFixture& d, const std::string& brief) {
  auto id = d.CliJson({"task", "create", "--brief", "-"}, brief)["task"]["id"].get<std::string>();
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  auto r = d.CliJson({"wait", "--task", id, "--types", "worker_done", "--from", "conclaved",
                      "--after", "0", "--timeout-ms", "60000"});
  REQUIRE(r["messages"].size() == 1);
  return r["messages"][0];
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("a worker printing past transcript_cap_mib keeps head and tail, and its result",
          "[disk]") {
  DaemonFixture d;
  StartWith(d, {{"transcript_cap_mib", 1}});
  json m = Run(d, "FAKE: print FIRST-LINE-OF-THE-RUN\nFAKE: spew 5000000\n");
  json p = json::parse(m["payload_json"].get<std::string>());
  // The contract printed after 5 MB is still found: the result is parsed from the kept tail.
  CHECK(p["outcome"] == "succeeded");
  CHECK(p["result"]["stdout_bytes"].get<int64_t>() > 5000000);
  std::string dir = d.state_dir() + "/dispatches/" + m["dispatch_id"].get<std::string>();
  for (const char* name : {"transcript.log", "stdout.log"}) {
    INFO(name);
    std::string log = Slurp(dir + "/" + name);
    CHECK(log.size() < (1 << 20) + 4096);
    CHECK(log.rfind("FIRST-LINE-OF-THE-RUN\n", 0) == 0);
    size_t marker = log.find("bytes of output cut here");
    REQUIRE(marker != std::string::npos);
    CHECK(marker > (1 << 19) - 1);  // after the 512 KiB head
    CHECK(log.find("SUMMARY: PASS", marker) != std::string::npos);  // the tail is there
  }
  for (const auto& e : fs::directory_iterator(dir)) {
    CHECK(e.path().filename().string().find(".tail.") == std::string::npos);
  }
  // Readers see the stored bytes: the marker is in what `terminal read` returns.
  auto r = d.Cli({"terminal", "read", "w1", "--cursor", std::to_string((1 << 19) - 64)});
  CHECK(r.out.find("bytes of output cut here") != std::string::npos);
}
