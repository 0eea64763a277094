// DaemonFixture: a real conclaved on a temporary state dir and a short unix socket path,
// driven with the real conclave binary. Each test gets its own; the destructor stops the
// daemon (SIGTERM, then SIGKILL) and removes the directory.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace conclave::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  nlohmann::json Json() const;  // parses out (throws on bad JSON)
};

// Runs argv (argv[0] a path) with extra env, feeding stdin; waits for it.
RunResult RunProgram(const std::vector<std::string>& argv, const std::string& stdin_data = "",
                     const std::vector<std::string>& extra_env = {});

// Files under dir (recursively) whose bytes contain needle.
std::vector<std::string> FilesContaining(const std::string& dir, const std::string& needle);

// Polls cond every 10 ms until true or timeout; returns the last value.
bool WaitFor(const std::function<bool()>& cond, std::chrono::milliseconds timeout);

// The environment a test's conclaved runs with: this process's, without CONCLAVE_* and
// NOTIFY_SOCKET, with extra_env (which wins), and CONCLAVE_LOOP_IDLE_CAP_MS=0 unless extra_env
// sets it: the loop's waits in gRPC's queue have no cap (api/queue_loop.h), so a wake the
// daemon fails to give its loop leaves it waiting and the test that needed it fails, where the
// 1 s cap would only have slowed it.
std::vector<std::string> DaemonEnv(const std::vector<std::string>& extra_env = {});

class DaemonFixture {
 public:
  DaemonFixture();
  ~DaemonFixture();

  // Runs conclaved through a launcher (e.g. unshare + a wrapper script) with extra env.
  void SetLauncher(std::vector<std::string> prefix, std::vector<std::string> extra_env) {
    launcher_ = std::move(prefix);
    extra_env_ = std::move(extra_env);
  }
  // Starts conclaved (extra flags appended); waits until `conclave status` answers.
  void Start(const std::vector<std::string>& extra_flags = {});
  // SIGTERM and wait; returns the exit status.
  int Stop();
  // SIGKILL, no cleanup (crash).
  void Kill();
  pid_t pid() const { return pid_; }

  // Runs `conclave --socket S <args>`.
  RunResult Cli(const std::vector<std::string>& args, const std::string& stdin_data = "") const;
  // Same with --json, parsed; REQUIREs exit 0.
  nlohmann::json CliJson(const std::vector<std::string>& args,
                         const std::string& stdin_data = "") const;

  const std::string& dir() const { return dir_; }
  const std::string& socket() const { return socket_; }
  std::string state_dir() const { return dir_ + "/state"; }
  std::string profiles_dir() const { return dir_ + "/profiles"; }
  // Writes profiles/<name>.json.
  void WriteProfile(const std::string& name, const nlohmann::json& profile) const;
  // A profile running the fake worker.
  nlohmann::json FakeProfile(const std::string& name, const std::string& family,
                             int max_concurrent = 1) const;
  std::string WriteFile(const std::string& rel, const std::string& content) const;
  std::string daemon_log() const;

 private:
  std::string dir_;
  std::string socket_;
  pid_t pid_ = -1;
  std::vector<std::string> launcher_;
  std::vector<std::string> extra_env_;
};

}  // namespace conclave::testing
