// What supervising one worker run takes and gives: its limits, its callbacks and its outcome,
// and RunHandle — a started run as the service layer sees it, whoever launched it (the real
// launcher or a test's fake). Thread-safety: loop thread only.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "domain/outcome.h"

namespace conclave::exec {

struct RunLimits {
  std::chrono::milliseconds hard_timeout{0};  // 0 = none
  // Idle = no output and no activity (RunHandle::NoteActivity) for this long.
  std::chrono::milliseconds idle_timeout{0};  // 0 = none: no idle escalation
  std::chrono::milliseconds idle_kill{0};     // 0 = never kill for being idle
  std::chrono::milliseconds kill_grace{3000};
  std::chrono::milliseconds eof_grace{2000};
  int64_t log_cap_bytes = 0;  // transcript.log and stdout.log each (CappedLog); 0 = none
};

struct RunOutcome {
  int exit_code = -1;  // -1 when killed by a signal
  int term_signal = 0;
  bool hard_timeout = false;
  bool idle_killed = false;
  domain::StopReason stop = domain::StopReason::kNone;  // Stop() was called
  std::string stop_detail;                              // what the stopper said
  int64_t stdout_bytes = 0;
  int64_t stderr_bytes = 0;
  std::string stderr_tail;  // last bytes of stderr (redacted), for classification
};

struct RunCallbacks {
  std::function<void(std::string_view stdout_chunk)> on_stdout;  // redacted
  // Output arrived: once it is written to the transcript (or at once, when the redactor holds
  // it back for now).
  std::function<void()> on_output;
  std::function<void(std::chrono::milliseconds silent_for)> on_idle;
  std::function<void(const RunOutcome&)> on_finished;  // exactly once
};

class RunHandle {
 public:
  virtual ~RunHandle() = default;
  virtual pid_t pid() const = 0;
  virtual int64_t start_time() const = 0;  // /proc/<pid>/stat field 22
  // Ends the run (SIGTERM to its group, SIGKILL after the grace); it finishes with `reason`.
  virtual void Stop(domain::StopReason reason, const std::string& detail) = 0;
  virtual bool finished() const = 0;
  virtual std::chrono::steady_clock::time_point last_output() const = 0;
  // The run's processes were seen working (CPU or I/O) although silent, or their activity
  // could not be read (unknown is never idle): the idle escalation and the idle kill count
  // silence from now. The hard timeout is not affected.
  virtual void NoteActivity() = 0;
};

}  // namespace conclave::exec
