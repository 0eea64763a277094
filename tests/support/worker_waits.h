// Waiting on real workers in integration tests: the daemon's own worker_done of a task, a
// fake worker's pid marker, whether a process is gone (a zombie counts as gone).
#pragma once

#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "daemon_fixture.h"

namespace conclave::testing::waits {
using json = nlohmann::json;
using namespace std::chrono_literals;

// Waits for the daemon's own worker_done of a task; returns the message.
inline json WaitDone(DaemonFixture& d, const std::string& task, int64_t timeout_ms = 30000) {
  std::string after = "0";
  for (;;) {
    auto r = d.CliJson({"wait", "--task", task, "--types", "worker_done", "--from", "conclaved",
                        "--after", after, "--timeout-ms", std::to_string(timeout_ms)});
    REQUIRE(!r["messages"].empty());
    for (const auto& m : r["messages"]) {
      if (m["from"] == "conclaved") return m;
    }
    after = r["cursor"].get<std::string>();
  }
}

inline json Payload(const json& m) { return json::parse(m["payload_json"].get<std::string>()); }

// Waits until the fake worker wrote its pid to marker (it is running); returns the pid.
inline pid_t WaitForMarker(const std::string& marker) {
  REQUIRE(WaitFor([&] { return std::filesystem::exists(marker) &&
                               std::filesystem::file_size(marker) > 0; }, 10s));
  pid_t pid = 0;
  std::ifstream(marker) >> pid;
  REQUIRE(pid > 0);
  return pid;
}

inline bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  // A zombie is gone for our purposes only once reaped; read its state.
  std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(st, line);
  auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z';
}

}  // namespace conclave::testing::waits
