// Shared by the end-to-end tests: the pinned real CLIs (installed by install-clis.sh), a
// conclaved with the mock provider inside a loopback-only network namespace, and a runner
// for one CLI alone (capture.sh). Nothing here can reach a real provider.
//
// When npm cannot reach its registry the CLIs cannot be installed: the test process then
// exits with kSkipExitCode, which ctest reports as skipped (SKIP_RETURN_CODE), never passed.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "daemon_fixture.h"

namespace conclave::e2e {

using conclave::testing::DaemonFixture;
using conclave::testing::RunProgram;
using conclave::testing::RunResult;
using json = nlohmann::json;

inline constexpr int kSkipExitCode = 77;
inline const std::string kE2eDir = std::string(CONCLAVE_SOURCE_DIR) + "/tests/e2e";

// Installs (or finds) the pinned CLIs; exits the process with kSkipExitCode when npm cannot
// reach its registry.
inline std::string CliBinDir() {
  static std::string dir = [] {
    const char* c = std::getenv("CONCLAVE_E2E_CACHE");
    const char* home = std::getenv("HOME");
    std::string cache = c ? c : std::string(home ? home : "/tmp") + "/.cache/conclave-e2e";
    RunResult r = RunProgram({"/bin/bash", kE2eDir + "/install-clis.sh", cache});
    if (r.exit_code == 77) {
      std::cerr << "SKIPPED: npm registry unreachable, the real CLIs cannot be installed\n"
                << r.err << std::flush;
      std::_Exit(kSkipExitCode);
    }
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::string out = r.out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }();
  return dir;
}

inline std::string PathWithClis() {
  std::string conclave_bin = CONCLAVE_BIN;
  std::string build_dir = conclave_bin.substr(0, conclave_bin.rfind('/'));
  const char* path = std::getenv("PATH");
  return CliBinDir() + ":" + build_dir + ":" + (path ? path : "/usr/bin:/bin");
}

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A daemon (with the mock) in its own loopback-only namespace; the shipped profiles, to which
// `adjust` may apply test-only changes (e.g. a shorter idle timeout).
struct E2eDaemon {
  std::string bin = CliBinDir();  // first: skips the test before anything is created
  DaemonFixture d;
  std::string prefix;

  explicit E2eDaemon(json config = json::object(),
                     const std::function<void(const std::string& profiles_dir)>& adjust = {}) {
    prefix = d.dir() + "/e2e";
    std::vector<std::string> launcher = {"/usr/bin/unshare", geteuid() == 0 ? "-n" : "-rn",
                                         "/bin/bash", kE2eDir + "/netns-daemon.sh", prefix};
    d.SetLauncher(launcher, {"PATH=" + PathWithClis()});
    std::filesystem::remove_all(d.profiles_dir());
    std::filesystem::copy(std::string(CONCLAVE_SOURCE_DIR) + "/profiles", d.profiles_dir(),
                          std::filesystem::copy_options::recursive);
    if (adjust) adjust(d.profiles_dir());
    json cfg = {{"retry", {{"base_ms", 200}, {"max_ms", 1000}, {"max_attempts", 1}}},
                {"review", {{"round_timeout_s", 240}}}};
    cfg.update(config);
    d.Start({"--config", d.WriteFile("config.json", cfg.dump())});
  }
  ~E2eDaemon() {
    d.Stop();
    pid_t mock = 0;
    std::ifstream(prefix + ".mock.pid") >> mock;
    if (mock > 0) kill(mock, SIGKILL);
  }
  std::string MockLog() const { return ReadAll(prefix + ".mock.log"); }
  int MockRequests() const {
    std::istringstream in(MockLog());
    int n = 0;
    for (std::string line; std::getline(in, line);) n += line.find("POST") != std::string::npos;
    return n;
  }
  // The largest user_bytes= the mock logged (the longest user text it received).
  long MaxUserBytes() const {
    std::istringstream in(MockLog());
    long best = 0;
    for (std::string line; std::getline(in, line);) {
      auto at = line.find("user_bytes=");
      if (at != std::string::npos) best = std::max(best, std::atol(line.c_str() + at + 11));
    }
    return best;
  }
};

inline std::string Terminal(E2eDaemon& e, const std::string& profile) {
  return e.d.CliJson({"terminal", "create", "--profile", profile, "--handle", "t-" + profile,
                      "--cwd", e.d.dir()})["handle"];
}

// Creates a task, dispatches it and returns the daemon's worker_done payload.
inline json RunTask(E2eDaemon& e, const std::string& terminal, const std::string& brief) {
  std::string id = e.d.CliJson({"task", "create", "--brief", "-", "--role", "tester"}, brief)
                       ["task"]["id"];
  e.d.CliJson({"dispatch", "--task", id, "--to", terminal});
  for (std::string after = "0";;) {
    auto r = e.d.CliJson({"wait", "--task", id, "--types", "worker_done", "--after", after,
                          "--timeout-ms", "300000"});
    REQUIRE(!r["messages"].empty());
    for (const auto& m : r["messages"]) {
      if (m["from"] == "conclaved") return json::parse(m["payload_json"].get<std::string>());
    }
    after = r["cursor"];
  }
}

// One CLI run alone, as the daemon would launch the profile (run_profile.js via capture.sh,
// in its own loopback-only namespace with the mock).
struct CliRun {
  int exit_code = -1;
  std::string out, err, mock_log;
};

inline CliRun RunCli(const std::string& work_dir, const std::string& profile,
                     const std::string& brief, const std::vector<std::string>& extra = {},
                     const std::vector<std::string>& env = {}) {
  std::filesystem::create_directories(work_dir);
  std::string brief_file = work_dir + "/brief.in.txt";
  std::ofstream(brief_file) << brief;
  std::vector<std::string> argv = {"/bin/bash", kE2eDir + "/capture.sh", work_dir + "/run",
                                   std::string(CONCLAVE_SOURCE_DIR) + "/profiles/" + profile + ".json",
                                   "@" + brief_file};
  argv.insert(argv.end(), extra.begin(), extra.end());
  std::vector<std::string> full_env = {"PATH=" + PathWithClis()};
  full_env.insert(full_env.end(), env.begin(), env.end());
  RunResult r = RunProgram(argv, "", full_env);
  CliRun run;
  auto summary = json::parse(ReadAll(work_dir + "/run/summary.json"), nullptr, false);
  INFO(r.out << r.err);
  REQUIRE(summary.is_object());
  run.exit_code = summary.value("exit", -1);
  run.out = ReadAll(work_dir + "/run/stdout.txt");
  run.err = ReadAll(work_dir + "/run/stderr.txt");
  run.mock_log = ReadAll(work_dir + "/run/mock.log");
  return run;
}

}  // namespace conclave::e2e
