// Config: every daemon setting, with XDG defaults, a JSON config file, and flags on top
// (flags win). Loaded once by main; read-only afterwards.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace conclave::config {

struct RetryConfig {
  int base_ms = 2000;
  int max_ms = 120000;
  int max_attempts = 4;  // operational retries per dispatch chain
};

struct BudgetConfig {
  double per_dispatch_usd = 0;  // defaults; 0 = no cap
  double per_task_usd = 0;
  double per_session_usd = 0;
  std::map<std::string, double> per_family_daily_usd;
};

struct ReviewConfig {
  // The mode of a review (and of a flow's review) that names none.
  std::string default_mode = "ordinary";
  int default_cap = 2;
  std::string default_profile;             // ordinary mode
  std::string default_primary;             // debate primary
  std::vector<std::string> default_challengers;
  int round_timeout_s = 900;  // a round's deadline is the lower of this and the profile's timeout_s
  int round_max_attempts = 2;  // tries of a round's dispatch (1 = no operational retry)
  int max_fix_rounds = 2;      // re-gates with a new artifact before a re-gate escalates
  // Where reviewer rounds run (a directory per round, outside the state directory);
  // "" = <state_dir>-reviews (beside the state directory, never inside it).
  std::string workdir;
};

struct FlowConfig {
  std::string worktree_root;  // "" = $XDG_DATA_HOME/conclave/worktrees (~/.local/share/...)
  std::string verify_profile = "shell";  // the "command" profile that runs --verify commands
  int max_parallel_writers = 3;  // implement steps running at once (seed 001's wave size)
};

// What the daemon deletes by itself, every interval_s (days may be fractional; 0 = keep).
struct RetentionConfig {
  double dispatch_days = 30;      // dispatch directories (transcripts) of finished dispatches
  double heartbeat_days = 7;      // heartbeat messages
  double read_message_days = 90;  // messages that were read
  double flow_days = 30;          // worktrees of ready and cancelled flows (branches stay)
  int interval_s = 3600;          // between passes (the first runs at start)
};

struct Config {
  std::string state_dir;
  std::string config_file;  // absolute, "" when none was given (a sandbox hides its directory)
  std::string listen;  // unix:/path or tcp:127.0.0.1:PORT
  std::string log_level = "info";
  std::string profiles_dir;
  std::string database_path;  // derived: state_dir/conclave.db
  bool synchronous_full = false;
  // gRPC's completion queue on a thread of its own, as before the loop polled it itself
  // (api/queue_loop.h): a hop between two threads for every request.
  bool api_queue_thread = false;
  // How long the loop polls gRPC's queue at most before it sleeps in it (common/poll_window.h;
  // 0: it sleeps at once). 0-1000, default 100: it spares a client that waits on each reply
  // the loop's sleep; it polls only while few connections call (README, Performance).
  int loop_poll_us = 100;
  int heartbeat_interval_s = 30;
  int kill_grace_ms = 3000;
  int eof_grace_ms = 2000;  // after the worker exits, how long its descendants may hold pipes
  // A worker's spawn whose child has existed a whole period of this without the spawn coming
  // back (one to two periods: stuck in the kernel before its program ran, e.g. a hung
  // filesystem under its directory or program) has its child killed: if the wait was killable
  // its dispatch fails as spawn_failed and the spawns queued behind it go on. At least 100.
  int spawn_timeout_ms = 30000;
  // How much nicer than the daemon every process it starts runs (0-19; exec::SetChildNice):
  // with the machine busy, the loop and the API threads are not left waiting behind workers.
  int child_nice = 10;
  int default_timeout_s = 1800;
  int default_idle_timeout_s = 300;
  // A silent run is alive while, within each idle window, its process tree uses at least this
  // much CPU or reads + writes at least this many bytes (idle escalation and kill need both
  // silence and inactivity).
  int liveness_cpu_ms = 200;
  int64_t liveness_io_bytes = 65536;
  int retry_after_cap_s = 3600;  // a provider's retry-after hint is capped at this
  // A dispatch's transcript.log and stdout.log each keep at most this much (head + tail).
  int transcript_cap_mib = 64;
  // A dispatch during which conclaved died uncleanly 3 times, each within this long of the
  // dispatch's (re)start, fails as crash_loop instead of being re-queued (domain/crash_loop).
  int crash_loop_window_s = 120;
  std::string tcp_token;  // bearer token required on a TCP listener
  RetryConfig retry;
  BudgetConfig budgets;
  ReviewConfig review;
  FlowConfig flow;
  // Run (argv, no shell) with the event as one JSON line on stdin whenever a flow reaches
  // ready or needs_human, or an urgent escalation is sent: a person hears of it outside the
  // inbox. Empty = none.
  std::vector<std::string> notify_command;
  RetentionConfig retention;
  nlohmann::json raw;  // the file as read, for later sections
};

struct Flags {
  std::string config_file, state_dir, listen, log_level, profiles_dir;
};

// Builds the config: defaults ← file (flags.config_file, if set) ← flags.
StatusOr<Config> LoadConfig(const Flags& flags);
// The same with the config file's text given (`file` names it in errors; flags.config_file is
// ignored). Never throws: a bad value is an error naming its key.
StatusOr<Config> LoadConfigFromJson(std::string_view text, const std::string& file,
                                    const Flags& flags);

}  // namespace conclave::config
