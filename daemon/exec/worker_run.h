// WorkerRun: supervises one spawned worker on the loop, as a small state machine.
// A run is finished only when the process has been reaped AND stdout and stderr reached EOF
// (tmux's rule). If the worker exits but a descendant keeps the pipes open, the rest of the
// process group is killed after eof_grace. Output is redacted and appended to the transcript
// file (stdout and stderr interleaved as they arrive) and stdout alone to stdout.log; memory
// use is bounded whatever the output size. Timeouts: hard (SIGTERM to the group, SIGKILL after
// kill_grace), idle (no output for idle_timeout → on_idle, once per silence) and idle kill.
// Thread-safety: loop thread only. Callbacks run on the loop.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "exec/child_process.h"
#include "exec/redactor.h"

namespace conclave::exec {

struct RunLimits {
  std::chrono::milliseconds hard_timeout{0};  // 0 = none
  std::chrono::milliseconds idle_timeout{0};  // 0 = none: no idle escalation
  std::chrono::milliseconds idle_kill{0};     // 0 = never kill for silence
  std::chrono::milliseconds kill_grace{3000};
  std::chrono::milliseconds eof_grace{2000};
};

struct RunOutcome {
  int exit_code = -1;      // -1 when killed by a signal
  int term_signal = 0;
  bool hard_timeout = false;
  bool idle_killed = false;
  bool stopped = false;    // Stop() was called (cancel, budget, shutdown)
  std::string stop_reason;
  int64_t stdout_bytes = 0;
  int64_t stderr_bytes = 0;
  std::string stderr_tail;  // last bytes of stderr (redacted), for classification
};

class WorkerRun : public std::enable_shared_from_this<WorkerRun> {
 public:
  struct Callbacks {
    std::function<void(std::string_view stdout_chunk)> on_stdout;  // redacted
    std::function<void()> on_output;                               // any output arrived
    std::function<void(std::chrono::milliseconds silent_for)> on_idle;
    std::function<void(const RunOutcome&)> on_finished;
  };

  WorkerRun(boost::asio::io_context& io, SpawnedChild child, std::string stdin_data,
            std::string transcript_path, std::string stdout_path,
            std::vector<std::string> secrets, RunLimits limits, Callbacks cb);
  ~WorkerRun();

  void Start();
  // Terminates the group (SIGTERM, SIGKILL after grace); finishes with stopped=true.
  void Stop(const std::string& reason);
  pid_t pid() const { return child_.pid; }
  bool finished() const { return finished_; }
  std::chrono::steady_clock::time_point last_output() const { return last_output_; }

 private:
  void WriteStdin();
  void ReadStream(bool is_stdout);
  void WatchExit();
  void OnExited(int wait_status);
  void ArmIdleTimer();
  void Terminate();
  void MaybeFinish();
  void Append(bool is_stdout, std::string_view data);

  boost::asio::io_context& io_;
  SpawnedChild child_;
  std::string stdin_data_;
  size_t stdin_written_ = 0;
  RunLimits limits_;
  Callbacks cb_;
  boost::asio::posix::stream_descriptor stdin_, stdout_, stderr_, pidfd_;
  boost::asio::steady_timer hard_timer_, idle_timer_, kill_timer_, eof_timer_, poll_timer_;
  StreamRedactor out_redactor_, err_redactor_;
  int transcript_fd_ = -1, stdout_fd_ = -1;
  char out_buf_[16384], err_buf_[16384];
  bool stdout_eof_ = false, stderr_eof_ = false, reaped_ = false, finished_ = false;
  bool terminating_ = false;
  std::chrono::steady_clock::time_point last_output_;
  bool idle_reported_ = false;
  RunOutcome outcome_;
};

}  // namespace conclave::exec
