// Tests for the daemon's config file (config/config.cpp) on bad values: what fuzz_config
// (tests/fuzz) turned up. A float beyond int's range was an undefined conversion.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"

namespace {

using conclave::config::Flags;
using conclave::config::LoadConfigFromJson;

TEST_CASE("config: an integer setting out of int's range is an error naming the key",
          "[config][fuzz]") {
  for (const char* text : {R"({"kill_grace_ms":1e300})", R"({"kill_grace_ms":4294967297})",
                           R"({"retry":{"max_ms":-1e19}})", R"({"review":{"default_cap":1e10}})",
                           // fuzz_config's own find (UBSan: 3e+26 outside the range of int):
                           "{\n  \"log_s\": 30, \n \"kill_grace_ms\": 300000000000008259655399000}"}) {
    auto c = LoadConfigFromJson(text, "c.json", Flags{});
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().message().find("out of range") != std::string::npos);
  }
  auto ok = LoadConfigFromJson(R"({"kill_grace_ms":2500,"state_dir":"/tmp/x"})", "c.json", Flags{});
  REQUIRE(ok.ok());
  CHECK(ok->kill_grace_ms == 2500);
}

TEST_CASE("config: child_nice is 10 unless set and must be a nice increment from 0 to 19",
          "[config]") {
  auto none = LoadConfigFromJson(R"({"state_dir":"/tmp/x"})", "c.json", Flags{});
  REQUIRE(none.ok());
  CHECK(none->child_nice == 10);
  for (int n : {0, 19}) {
    auto ok = LoadConfigFromJson(R"({"state_dir":"/tmp/x","child_nice":)" + std::to_string(n) + "}",
                                 "c.json", Flags{});
    REQUIRE(ok.ok());
    CHECK(ok->child_nice == n);
  }
  for (const char* bad : {R"({"child_nice":20})", R"({"child_nice":-1})"}) {
    auto c = LoadConfigFromJson(bad, "c.json", Flags{});
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().message().find("child_nice") != std::string::npos);
  }
}

TEST_CASE("config: loop_poll_us is 100 unless set and must be from 0 to 1000 µs", "[config]") {
  auto none = LoadConfigFromJson(R"({"state_dir":"/tmp/x"})", "c.json", Flags{});
  REQUIRE(none.ok());
  CHECK(none->loop_poll_us == 100);
  for (int n : {0, 50, 1000}) {
    auto ok = LoadConfigFromJson(
        R"({"state_dir":"/tmp/x","loop_poll_us":)" + std::to_string(n) + "}", "c.json", Flags{});
    REQUIRE(ok.ok());
    CHECK(ok->loop_poll_us == n);
  }
  for (const char* bad : {R"({"loop_poll_us":1001})", R"({"loop_poll_us":-1})",
                          R"({"loop_poll_us":"50"})"}) {
    auto c = LoadConfigFromJson(bad, "c.json", Flags{});
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().message().find("loop_poll_us") != std::string::npos);
  }
}

TEST_CASE("config: api_queue_thread is false unless set and must be a boolean", "[config]") {
  auto none = LoadConfigFromJson(R"({"state_dir":"/tmp/x"})", "c.json", Flags{});
  REQUIRE(none.ok());
  CHECK_FALSE(none->api_queue_thread);
  auto on = LoadConfigFromJson(R"({"state_dir":"/tmp/x","api_queue_thread":true})", "c.json",
                               Flags{});
  REQUIRE(on.ok());
  CHECK(on->api_queue_thread);
  auto bad = LoadConfigFromJson(R"({"api_queue_thread":"yes"})", "c.json", Flags{});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("'api_queue_thread'") != std::string::npos);
}

TEST_CASE("config: notify_command is an argv, read as given, and must name a program",
          "[config]") {
  auto none = LoadConfigFromJson(R"({"state_dir":"/tmp/x"})", "c.json", Flags{});
  REQUIRE(none.ok());
  CHECK(none->notify_command.empty());
  auto ok = LoadConfigFromJson(R"({"state_dir":"/tmp/x","notify_command":["notify-send","conclave"]})",
                               "c.json", Flags{});
  REQUIRE(ok.ok());
  CHECK(ok->notify_command == std::vector<std::string>{"notify-send", "conclave"});
  for (const char* bad : {R"({"notify_command":"notify-send conclave"})", R"({"notify_command":[""]})"}) {
    auto c = LoadConfigFromJson(bad, "c.json", Flags{});
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().message().find("notify_command") != std::string::npos);
  }
}

TEST_CASE("config: review.default_mode defaults to ordinary, is read and must be a mode",
          "[config]") {
  auto none = LoadConfigFromJson(R"({"state_dir":"/tmp/x"})", "c.json", Flags{});
  REQUIRE(none.ok());
  CHECK(none->review.default_mode == "ordinary");
  auto simple = LoadConfigFromJson(R"({"state_dir":"/tmp/x","review":{"default_mode":"simple"}})",
                                   "c.json", Flags{});
  REQUIRE(simple.ok());
  CHECK(simple->review.default_mode == "simple");
  auto bad = LoadConfigFromJson(R"({"review":{"default_mode":"thorough"}})", "c.json", Flags{});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("review.default_mode") != std::string::npos);
}

TEST_CASE("config: text that is not a JSON object is an error, not an exception",
          "[config][fuzz]") {
  for (const char* text : {"", "[1]", "{\"listen\":", "{\"heartbeat_interval_s\":\"x\"}"}) {
    CHECK_FALSE(LoadConfigFromJson(text, "c.json", Flags{}).ok());
  }
}

}  // namespace

namespace {

conclave::StatusOr<conclave::config::Config> WithListen(const std::string& listen) {
  Flags f;
  f.listen = listen;
  return LoadConfigFromJson(R"({"tcp_token":"t0k3n-for-tests","state_dir":"/tmp/x"})", "c.json", f);
}

TEST_CASE("config: a TCP listener is loopback by its address, not by how it is spelled",
          "[config]") {
  for (const char* ok : {"tcp:127.0.0.1:7777", "tcp:127.9.8.7:1", "tcp:[::1]:7777",
                         "tcp:localhost:65535"}) {
    INFO(ok);
    auto c = WithListen(ok);
    CHECK(c.ok());
  }
  for (const char* bad : {"tcp:127.0.0.1.evil.com:7777", "tcp:0.0.0.0:7777", "tcp:[::]:7777",
                          "tcp:10.0.0.1:7777", "tcp:example.com:80", "tcp:128.0.0.1:7777",
                          "tcp:[::ffff:10.0.0.1]:7777", "tcp:::1:7777", "tcp:127.0.0.1:0",
                          "tcp:127.0.0.1:99999", "tcp:127.0.0.1:80x", "tcp:127.0.0.1",
                          "tcp::7777"}) {
    INFO(bad);
    auto c = WithListen(bad);
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().message().rfind("listen: ", 0) == 0);
  }
  CHECK(WithListen("tcp:127.0.0.1.evil.com:7777").status().message().find("not an IP address") !=
        std::string::npos);
  CHECK(WithListen("tcp:0.0.0.0:7777").status().message().find("not a loopback address") !=
        std::string::npos);
}

}  // namespace
TEST_CASE("config: liveness thresholds have stated defaults, are read, and must not be negative",
          "[config][liveness]") {
  auto d = LoadConfigFromJson(R"({"state_dir":"/tmp/x"})", "c.json", Flags{});
  REQUIRE(d.ok());
  CHECK(d->liveness_cpu_ms == 200);
  CHECK(d->liveness_io_bytes == 65536);
  CHECK(d->retry_after_cap_s == 3600);
  auto set = LoadConfigFromJson(R"({"state_dir":"/tmp/x","liveness_cpu_ms":50,
                                    "liveness_io_bytes":0})", "c.json", Flags{});
  REQUIRE(set.ok());
  CHECK(set->liveness_cpu_ms == 50);
  CHECK(set->liveness_io_bytes == 0);
  auto bad = LoadConfigFromJson(R"({"state_dir":"/tmp/x","liveness_cpu_ms":-1})", "c.json", Flags{});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("liveness_cpu_ms") != std::string::npos);
}

TEST_CASE("config: transcript cap and retention have stated defaults, are read and checked",
          "[config][retention]") {
  auto d = LoadConfigFromJson(R"({"state_dir":"/tmp/x"})", "c.json", Flags{});
  REQUIRE(d.ok());
  CHECK(d->transcript_cap_mib == 64);
  CHECK(d->crash_loop_window_s == 120);
  CHECK(d->retention.dispatch_days == 30);
  CHECK(d->retention.heartbeat_days == 7);
  CHECK(d->retention.read_message_days == 90);
  CHECK(d->retention.interval_s == 3600);
  auto set = LoadConfigFromJson(
      R"({"state_dir":"/tmp/x","transcript_cap_mib":0,"crash_loop_window_s":30,
          "retention":{"dispatch_days":0.5,"heartbeat_days":0,"interval_s":60}})",
      "c.json", Flags{});
  REQUIRE(set.ok());
  CHECK(set->transcript_cap_mib == 0);
  CHECK(set->crash_loop_window_s == 30);
  CHECK(set->retention.dispatch_days == 0.5);
  CHECK(set->retention.heartbeat_days == 0);
  CHECK(set->retention.interval_s == 60);
  for (const char* bad : {R"({"state_dir":"/tmp/x","retention":{"heartbeat_days":-1}})",
                          R"({"state_dir":"/tmp/x","retention":{"interval_s":0}})",
                          R"({"state_dir":"/tmp/x","retention":{"dispatch_days":"a week"}})",
                          R"({"state_dir":"/tmp/x","transcript_cap_mib":-5})",
                          R"({"state_dir":"/tmp/x","crash_loop_window_s":-1})"}) {
    INFO(bad);
    auto r = LoadConfigFromJson(bad, "c.json", Flags{});
    REQUIRE_FALSE(r.ok());
    bool named = r.status().message().find("retention") != std::string::npos ||
                 r.status().message().find("transcript_cap_mib") != std::string::npos ||
                 r.status().message().find("dispatch_days") != std::string::npos ||
                 r.status().message().find("crash_loop_window_s") != std::string::npos;
    CHECK(named);
  }
}

TEST_CASE("config: the shipped example config loads", "[config]") {
  std::ifstream in(std::string(CONCLAVE_SOURCE_DIR) + "/deploy/config.example.json");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  auto c = LoadConfigFromJson(ss.str(), "config.example.json", Flags{});
  INFO(c.status().message());
  REQUIRE(c.ok());
  CHECK(c->transcript_cap_mib == 64);
}

TEST_CASE("config: spawn_timeout_ms defaults to 30 s, is read, and must be at least 100 ms",
          "[config]") {
  auto d = LoadConfigFromJson("{}", "c.json", Flags{});
  REQUIRE(d.ok());
  CHECK(d->spawn_timeout_ms == 30000);
  auto set = LoadConfigFromJson(R"({"spawn_timeout_ms": 250})", "c.json", Flags{});
  REQUIRE(set.ok());
  CHECK(set->spawn_timeout_ms == 250);
  for (const char* bad : {R"({"spawn_timeout_ms": 0})", R"({"spawn_timeout_ms": -5})",
                          R"({"spawn_timeout_ms": 99})", R"({"spawn_timeout_ms": "soon"})"}) {
    auto r = LoadConfigFromJson(bad, "c.json", Flags{});
    INFO(bad);
    REQUIRE(!r.ok());
    CHECK(r.status().message().find("spawn_timeout_ms") != std::string::npos);
  }
}
