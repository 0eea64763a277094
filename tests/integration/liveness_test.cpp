// Integration: liveness of silent runs with the real daemon and real processes. A worker that
// prints nothing but keeps working (CPU, or reading a slow pipe) outlives 3 × its idle timeout
// with "activity" heartbeats; one that is silent and idle is killed as heartbeat_lost.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "daemon_fixture.h"
#include "worker_waits.h"

using conclave::testing::DaemonFixture;
using json = nlohmann::json;
using namespace conclave::testing::waits;

namespace {

// A daemon whose fake profile has a 1 s idle timeout (so the idle kill comes at 3 s).
void StartSilentFake(DaemonFixture& d, const std::string& config) {
  auto p = d.FakeProfile("fake", "fakefam");
  p["idle_timeout_s"] = 1;
  d.WriteProfile("fake", p);
  d.Start({"--config", d.WriteFile("config.json", config)});
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
}

std::string Dispatch(DaemonFixture& d, const std::string& brief) {
  auto r = d.CliJson({"task", "create", "--brief", "-"}, brief);
  std::string id = r["task"]["id"].get<std::string>();
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  return id;
}

json DonePayload(DaemonFixture& d, const std::string& task) { return Payload(WaitDone(d, task)); }

std::vector<json> Heartbeats(DaemonFixture& d, const std::string& task) {
  std::vector<json> out;
  json inbox = d.CliJson({"inbox", "--task", task, "--types", "heartbeat"});
  for (const auto& m : inbox["messages"]) {
    out.push_back(json::parse(m["payload_json"].get<std::string>()));
  }
  return out;
}

bool AnyActivityHeartbeat(const std::vector<json>& hbs) {
  for (const auto& h : hbs) {
    if (h.value("signal", "") == "activity") return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a silent worker burning CPU is not killed past 3 x its idle timeout",
          "[liveness]") {
  DaemonFixture d;
  StartSilentFake(d, R"({"heartbeat_interval_s": 0, "liveness_cpu_ms": 50,
                         "liveness_io_bytes": 0})");
  std::string id = Dispatch(d, "FAKE: busy-silent 4500\n");
  auto p = DonePayload(d, id);
  INFO(p.dump());
  CHECK(p["outcome"] == "succeeded");
  CHECK(AnyActivityHeartbeat(Heartbeats(d, id)));
}

TEST_CASE("a silent worker reading a slow pipe is not killed past 3 x its idle timeout",
          "[liveness]") {
  DaemonFixture d;
  // The CPU signal off: the pipe's I/O alone keeps it alive.
  StartSilentFake(d, R"({"heartbeat_interval_s": 0, "liveness_cpu_ms": 0})");
  std::string id = Dispatch(d, "FAKE: read-slow-pipe 4500\n");
  auto p = DonePayload(d, id);
  INFO(p.dump());
  CHECK(p["outcome"] == "succeeded");
  auto hbs = Heartbeats(d, id);
  REQUIRE(AnyActivityHeartbeat(hbs));
  for (const auto& h : hbs) {
    if (h.value("signal", "") == "activity") CHECK(h["io_bytes"].get<int64_t>() >= 65536);
  }
}

TEST_CASE("a silent idle worker is killed as heartbeat_lost", "[liveness]") {
  DaemonFixture d;
  StartSilentFake(d, R"({"heartbeat_interval_s": 0})");
  std::string id = Dispatch(d, "FAKE: hang\n");
  auto p = DonePayload(d, id);
  INFO(p.dump());
  CHECK(p["failure_kind"] == "heartbeat_lost");
  CHECK_FALSE(AnyActivityHeartbeat(Heartbeats(d, id)));
}
