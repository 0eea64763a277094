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

TEST_CASE("the capped logs of a run cut short by a daemon crash are stitched at restart",
          "[disk]") {
  DaemonFixture d;
  std::string config = d.WriteFile("config.json", json({{"transcript_cap_mib", 1}}).dump());
  d.WriteProfile("fake", d.FakeProfile("fake", "fakefam"));
  d.Start({"--config", config});
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  auto id = d.CliJson({"task", "create", "--brief", "-"},
                      "FAKE: print FIRST-LINE-OF-THE-RUN\nFAKE: spew 3000000\n"
                      "FAKE: print LAST-LINE-BEFORE-THE-CRASH\nFAKE: hang\n")["task"]["id"]
                .get<std::string>();
  std::string did =
      d.CliJson({"dispatch", "--task", id, "--to", "w1"})["id"].get<std::string>();
  std::string dir = d.state_dir() + "/dispatches/" + did;
  std::string tails;  // what the transcript's tail segments hold
  auto segments = [&] {
    int n = 0;
    tails.clear();
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      std::string name = e.path().filename().string();
      if (name.find(".tail.") == std::string::npos) continue;
      ++n;
      if (name.rfind("transcript.log", 0) == 0) tails += Slurp(e.path().string());
    }
    return n;
  };
  // The last line went to a tail segment: the whole output is on disk, unstitched.
  REQUIRE(conclave::testing::WaitFor(
      [&] { return segments() > 0 && tails.find("LAST-LINE") != std::string::npos; },
      std::chrono::seconds(30)));
  d.Kill();
  d.Start({"--config", config});
  CHECK(conclave::testing::WaitFor([&] { return segments() == 0; }, std::chrono::seconds(30)));
  for (const char* name : {"transcript.log", "stdout.log"}) {
    INFO(name);
    std::string log = Slurp(dir + "/" + name);
    CHECK(log.rfind("FIRST-LINE-OF-THE-RUN\n", 0) == 0);
    size_t marker = log.find("bytes of output cut here");
    REQUIRE(marker != std::string::npos);
    CHECK(log.find("LAST-LINE-BEFORE-THE-CRASH", marker) != std::string::npos);
  }
  d.CliJson({"task", "cancel", id});
}

TEST_CASE("retention removes old dispatch directories by itself and status shows disk use",
          "[disk]") {
  DaemonFixture d;
  // About 1.7 s: old enough soon after the run; a pass every second.
  StartWith(d, {{"retention", {{"dispatch_days", 0.00002}, {"interval_s", 1}}}});
  json m = Run(d, "FAKE: spew 300000\n");
  std::string dir = d.state_dir() + "/dispatches/" + m["dispatch_id"].get<std::string>();
  REQUIRE(fs::exists(dir + "/transcript.log"));
  CHECK(conclave::testing::WaitFor([&] { return !fs::exists(dir); }, std::chrono::seconds(30)));
  json status;
  CHECK(conclave::testing::WaitFor(
      [&] {
        status = d.CliJson({"status"});
        return status.contains("disk") &&
               std::stoll(status["disk"].value("removed_dispatch_dirs", std::string("0"))) >= 1;
      },
      std::chrono::seconds(30)));
  INFO(status.dump());
  const auto& disk = status["disk"];
  int64_t db_size = static_cast<int64_t>(fs::file_size(d.state_dir() + "/conclave.db"));
  CHECK(std::stoll(disk["state_bytes"].get<std::string>()) >= db_size);
  CHECK(std::stoll(disk["free_bytes"].get<std::string>()) > 0);
  auto human = d.Cli({"status"});
  CHECK(human.out.find("MiB used") != std::string::npos);
}
