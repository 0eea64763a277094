// WorkerRun: supervises one spawned worker on the loop, as a small state machine.
//   running ──(SIGTERM sent: timeout, idle kill, Stop)──▶ terminating
//   running | terminating ──(leader exited)──▶ exited ──(stdout and stderr at EOF)──▶ finished
// A run is finished only when the process has exited AND both pipes reached EOF (tmux's rule). The
// leader is reaped only then: until it is, its zombie pins the process group id, so signalling the
// group can never reach a recycled group. If the worker exits but a descendant keeps the pipes
// open, the rest of the process group is killed after eof_grace. When the daemon kept its own
// copies of the pipes' write ends (SpawnSpec::hold_output_ends, as the launcher does), it closes
// them once the leader has exited: the pipes end together with the exit, not one wake-up each as
// the worker closes its ends on the way out. Output is redacted on the loop and appended, on the
// log writer's thread (exec/log_writer), to the transcript file (created with the first output
// byte, with the dispatch directory if missing; stdout and stderr interleaved as they arrive) and
// stdout alone to stdout.log, each capped on disk (CappedLog: head + tail, stitched after the run).
// on_stdout sees each redacted stdout chunk at once; on_output follows once the chunk is written,
// and on_finished once the logs are closed. Past kMaxUnwritten bytes handed to the writer and not
// yet written, the pipes are not read (the worker waits on them, and is not idle meanwhile; what a
// pipe holds when eof_grace ends is read before it is closed): memory use is bounded whatever the
// output size. Timeouts: hard (SIGTERM to the group, SIGKILL after kill_grace), idle (no output and
// no activity noted for idle_timeout → on_idle, once per silence) and idle kill (the same for
// idle_kill). Activity is judged by the caller (the service layer samples /proc off the loop) and
// reported with NoteActivity().
// Thread-safety: loop thread only. Callbacks run on the loop.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/child_process.h"
#include "exec/log_writer.h"
#include "exec/redactor.h"
#include "exec/run_logs.h"
#include "exec/run_tree.h"
#include "exec/run_types.h"

namespace conclave::exec {

class WorkerRun : public RunHandle, public std::enable_shared_from_this<WorkerRun> {
 public:
  enum class Phase { kRunning, kTerminating, kExited, kFinished };

  // Redacted output handed to the writer and not written yet, at most (then reading pauses).
  static constexpr int64_t kMaxUnwritten = 512 * 1024;

  WorkerRun(boost::asio::io_context& io, SpawnedChild child, std::string stdin_data,
            std::string transcript_path, std::string stdout_path,
            std::vector<std::string> secrets, RunLimits limits, RunCallbacks cb,
            std::shared_ptr<LogWriter> writer);
  ~WorkerRun() override;

  void Start();
  // Stops go to the run's whole tree (exec/run_tree), not only its group: a SIGTERM reaches
  // what called setsid, a SIGKILL ends it, and what is left after the leader exits is killed.
  // A sandboxed run's SIGTERM goes to the processes inside bwrap, not to bwrap (which would
  // end them with SIGKILL at once). Call before Start; without it only the group is signalled.
  void SweepTree(TreeSweeper* sweeper, std::vector<std::string> env, bool sandboxed);
  void Stop(domain::StopReason reason, const std::string& detail) override;
  pid_t pid() const override { return child_.pid; }
  int64_t start_time() const override { return child_.start_time; }
  bool finished() const override { return phase_ == Phase::kFinished; }
  std::chrono::steady_clock::time_point last_output() const override { return last_output_; }
  void NoteActivity() override;
  Phase phase() const { return phase_; }
  // Bytes handed to the writer and not written yet; whether a pipe waits for them (tests).
  int64_t unwritten_bytes() const { return unwritten_; }
  bool reading_paused() const { return paused_[0] || paused_[1]; }
  bool pipes_open() const { return stdout_.is_open() || stderr_.is_open(); }
  bool pipe_open(bool is_stdout) const { return (is_stdout ? stdout_ : stderr_).is_open(); }
  // How many times the idle timer has checked the run (tests: time passed for the idle rules).
  int idle_checks() const { return idle_checks_; }

 private:
  bool exited() const { return phase_ == Phase::kExited || phase_ == Phase::kFinished; }
  void WriteStdin();
  void ReadStream(bool is_stdout);
  void OnStreamEnd(bool is_stdout);
  void OnRead(bool is_stdout, std::string_view data);
  // Reads what the pipe holds now, at most its size (no read of it out), before it is closed
  // once eof_grace has passed.
  void DrainPipe(bool is_stdout);
  void WatchExit();
  void OnExited(int exit_code, int term_signal);
  // Closes the write ends the daemon kept (SpawnSpec::hold_output_ends), if it kept them.
  void ReleaseOutputEnds();
  // After ReleaseOutputEnds: every pipe still open is read and has no writer left, so its
  // read reaches EOF without waiting on anyone.
  bool OutputEndsNow();
  // Starts eof_grace (once): when it ends, the group is killed and the pipes are drained and
  // closed.
  void ArmEofGrace();
  void KillGroupIfPinned();
  void Reap();
  void ArmIdleTimer();
  void OnIdleTick();
  void Terminate();
  void MaybeFinish();
  void Append(bool is_stdout, std::string_view data);

  boost::asio::io_context& io_;
  SpawnedChild child_;
  std::string stdin_data_;
  size_t stdin_written_ = 0;
  RunLimits limits_;
  RunCallbacks cb_;
  boost::asio::posix::stream_descriptor stdin_, stdout_, stderr_, pidfd_;
  boost::asio::steady_timer hard_timer_, idle_timer_, kill_timer_, eof_timer_, poll_timer_;
  StreamRedactor out_redactor_, err_redactor_;
  // The run's two logs, written on the writer's thread only.
  void Write(std::string data, bool is_stdout);
  void OnWritten(int64_t n);
  std::shared_ptr<LogWriter> writer_;
  std::shared_ptr<RunLogs> logs_;
  int64_t unwritten_ = 0;
  bool paused_[2] = {false, false};  // [is_stdout]: not read until the writer catches up
  bool eof_armed_ = false;   // eof_grace's timer was started (once per run)
  bool grace_over_ = false;  // eof_grace ended: a read in flight ends its stream once it is back
  int idle_checks_ = 0;
  char out_buf_[16384], err_buf_[16384];
  Phase phase_ = Phase::kRunning;
  int open_streams_ = 2;  // stdout and stderr until each reaches EOF
  bool held_output_ends_;  // the launcher kept both write ends (SpawnSpec::hold_output_ends)
  bool reaped_elsewhere_ = false;  // ECHILD: the status is unknown (never taken as success)
  std::chrono::steady_clock::time_point last_output_;
  std::chrono::steady_clock::time_point last_activity_;  // NoteActivity: working, not printing
  // Set when the current silence was reported through on_idle; cleared by new output.
  std::optional<std::chrono::steady_clock::time_point> silence_reported_;
  RunOutcome outcome_;
  TreeSweeper* sweeper_ = nullptr;
  std::vector<std::string> tree_env_;
  bool sandboxed_ = false;
  RunMarks Marks() const;
};

}  // namespace conclave::exec
