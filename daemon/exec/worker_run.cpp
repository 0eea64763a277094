#include "exec/worker_run.h"
#include "common/loop_kick.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <utility>

#include "exec/child_registry.h"
#include "exec/proc_info.h"

namespace conclave::exec {
namespace {
constexpr size_t kStderrTail = 8192;

}  // namespace

WorkerRun::WorkerRun(boost::asio::io_context& io, SpawnedChild child, std::string stdin_data,
                     std::string transcript_path, std::string stdout_path,
                     std::vector<std::string> secrets, RunLimits limits, RunCallbacks cb,
                     std::shared_ptr<LogWriter> writer)
    : io_(io),
      child_(child),
      stdin_data_(std::move(stdin_data)),
      limits_(limits),
      cb_(std::move(cb)),
      stdin_(io),
      stdout_(io, child.stdout_fd),
      stderr_(io, child.stderr_fd),
      pidfd_(io),
      hard_timer_(io),
      idle_timer_(io),
      kill_timer_(io),
      eof_timer_(io),
      poll_timer_(io),
      out_redactor_(std::move(secrets)),
      err_redactor_(out_redactor_),  // the same forms: computed once
      writer_(std::move(writer)),
      logs_(std::make_shared<RunLogs>()),
      held_output_ends_(child.stdout_hold >= 0 && child.stderr_hold >= 0) {
  if (child.stdin_fd >= 0) stdin_.assign(child.stdin_fd);  // else /dev/null: nothing to write
  if (child.pidfd >= 0) pidfd_.assign(child.pidfd);
  logs_->transcript_path = std::move(transcript_path);
  logs_->stdout_path = std::move(stdout_path);
  logs_->cap = limits_.log_cap_bytes;
  last_output_ = std::chrono::steady_clock::now();
  last_activity_ = last_output_;
}

WorkerRun::~WorkerRun() { ReleaseOutputEnds(); }

void WorkerRun::ReleaseOutputEnds() {
  for (int* fd : {&child_.stdout_hold, &child_.stderr_hold}) {
    if (*fd >= 0) close(std::exchange(*fd, -1));
  }
}

void WorkerRun::Start() {
  WriteStdin();
  ReadStream(true);
  ReadStream(false);
  WatchExit();
  if (limits_.hard_timeout.count() > 0) {
    hard_timer_.expires_after(limits_.hard_timeout);
    hard_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->exited()) return;
      self->outcome_.hard_timeout = true;
      self->Terminate();
    });
  }
  ArmIdleTimer();
}

void WorkerRun::WriteStdin() {
  if (!stdin_.is_open()) return;
  if (stdin_written_ >= stdin_data_.size()) {
    boost::system::error_code ec;
    stdin_.close(ec);
    return;
  }
  stdin_.async_write_some(
      boost::asio::buffer(stdin_data_.data() + stdin_written_,
                          std::min<size_t>(65536, stdin_data_.size() - stdin_written_)),
      [self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
        if (ec) {  // EPIPE: the worker does not read its stdin; fine
          boost::system::error_code ignore;
          self->stdin_.close(ignore);
          return;
        }
        self->stdin_written_ += n;
        self->WriteStdin();
      });
}

void WorkerRun::Append(bool is_stdout, std::string_view data) {
  std::string clean = is_stdout ? out_redactor_.Feed(data) : err_redactor_.Feed(data);
  if (clean.empty()) {  // held back by the redactor: output came, nothing new to write
    if (cb_.on_output) cb_.on_output();
    return;
  }
  if (is_stdout) {
    if (cb_.on_stdout) cb_.on_stdout(clean);
  } else {
    outcome_.stderr_tail += clean;
    if (outcome_.stderr_tail.size() > kStderrTail) {
      outcome_.stderr_tail.erase(0, outcome_.stderr_tail.size() - kStderrTail);
    }
  }
  Write(std::move(clean), is_stdout);
}

void WorkerRun::Write(std::string data, bool is_stdout) {
  const auto n = static_cast<int64_t>(data.size());
  unwritten_ += n;
  writer_->Post([logs = logs_, data = std::move(data), is_stdout, &io = io_,
                 weak = weak_from_this(), n] {
    logs->Write(data, is_stdout);
    PostToLoop(io, [weak, n] {
      if (auto self = weak.lock()) self->OnWritten(n);
    });
  });
}

void WorkerRun::OnWritten(int64_t n) {
  unwritten_ -= n;
  if (cb_.on_output) cb_.on_output();
  // Read again once half the bound is written: not a read per written chunk.
  if (unwritten_ > kMaxUnwritten / 2) return;
  for (bool is_stdout : {true, false}) {
    if (!std::exchange(paused_[is_stdout], false)) continue;
    auto& stream = is_stdout ? stdout_ : stderr_;
    if (stream.is_open()) {
      ReadStream(is_stdout);
    } else {
      OnStreamEnd(is_stdout);  // closed while it waited (eof_grace after the leader's exit)
    }
  }
}

void WorkerRun::ReadStream(bool is_stdout) {
  auto& stream = is_stdout ? stdout_ : stderr_;
  char* buf = is_stdout ? out_buf_ : err_buf_;
  stream.async_read_some(
      boost::asio::buffer(buf, sizeof(out_buf_)),
      [self = shared_from_this(), is_stdout, buf](const boost::system::error_code& ec, size_t n) {
        if (n > 0) self->OnRead(is_stdout, std::string_view(buf, n));
        if (self->grace_over_) {
          // eof_grace ended while this read was out (cancelled, or done and queued behind the
          // grace's handler): after its bytes, what the pipe still holds, then the end.
          self->DrainPipe(is_stdout);
          return self->OnStreamEnd(is_stdout);
        }
        if (ec) return self->OnStreamEnd(is_stdout);
        if (self->unwritten_ > kMaxUnwritten) {
          self->paused_[is_stdout] = true;  // OnWritten reads on
          // After the exit, a pipe paused with output left (OnExited found it still being
          // read) is drained when eof_grace ends, not only once the writer catches up.
          if (self->phase_ == Phase::kExited) self->ArmEofGrace();
          return;
        }
        self->ReadStream(is_stdout);
      });
}

void WorkerRun::OnRead(bool is_stdout, std::string_view data) {
  (is_stdout ? outcome_.stdout_bytes : outcome_.stderr_bytes) += static_cast<int64_t>(data.size());
  last_output_ = std::chrono::steady_clock::now();
  silence_reported_.reset();
  Append(is_stdout, data);
}

void WorkerRun::DrainPipe(bool is_stdout) {
  auto& stream = is_stdout ? stdout_ : stderr_;
  if (!stream.is_open()) return;
  // What the pipe holds now, at most its size: a descendant still writing cannot keep this going.
  int left = 0;
  if (ioctl(stream.native_handle(), FIONREAD, &left) != 0) return;
  char* buf = is_stdout ? out_buf_ : err_buf_;  // no read of it is out (paused, or back)
  while (left > 0) {
    ssize_t n = read(stream.native_handle(), buf, std::min<size_t>(left, sizeof(out_buf_)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    left -= static_cast<int>(n);
    OnRead(is_stdout, std::string_view(buf, static_cast<size_t>(n)));
  }
}

void WorkerRun::OnStreamEnd(bool is_stdout) {
  --open_streams_;
  std::string tail = is_stdout ? out_redactor_.Finish() : err_redactor_.Finish();
  if (!tail.empty()) {
    if (is_stdout) {
      if (cb_.on_stdout) cb_.on_stdout(tail);
    } else {
      outcome_.stderr_tail += tail;
    }
    Write(std::move(tail), is_stdout);
  }
  boost::system::error_code ignore;
  (is_stdout ? stdout_ : stderr_).close(ignore);
  MaybeFinish();
}

void WorkerRun::WatchExit() {
  auto check = [self = shared_from_this()]() {
    // Peek without reaping: the leader stays a zombie until the run finishes, so its pid pins
    // the process group and signalling the group can never reach a recycled one.
    siginfo_t si{};
    int rc;
    do {
      rc = waitid(P_PID, static_cast<id_t>(self->child_.pid), &si, WEXITED | WNOHANG | WNOWAIT);
    } while (rc < 0 && errno == EINTR);
    if (rc == 0 && si.si_pid == self->child_.pid) {
      self->OnExited(si.si_code == CLD_EXITED ? si.si_status : -1,
                     si.si_code == CLD_EXITED ? 0 : si.si_status);
      return true;
    }
    if (rc < 0 && errno == ECHILD) {
      // Reaped elsewhere: the status is unknown, and unknown is never success.
      self->reaped_elsewhere_ = true;
      self->OnExited(-1, 0);
      return true;
    }
    return false;
  };
  if (pidfd_.is_open()) {
    pidfd_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                      [self = shared_from_this(), check](const boost::system::error_code& ec) {
                        if (ec == boost::asio::error::operation_aborted) return;
                        if (!check()) self->WatchExit();
                      });
  } else {
    poll_timer_.expires_after(std::chrono::milliseconds(50));
    poll_timer_.async_wait([self = shared_from_this(), check](const boost::system::error_code& ec) {
      if (ec) return;
      if (!check()) self->WatchExit();
    });
  }
}

void WorkerRun::OnExited(int exit_code, int term_signal) {
  phase_ = Phase::kExited;
  // The worker's own ends closed before its exit was signalled: with the daemon's closed too,
  // a pipe no descendant holds is at EOF now, and its read ends it in this same wake-up.
  ReleaseOutputEnds();
  boost::system::error_code ignore;
  pidfd_.close(ignore);
  outcome_.exit_code = exit_code;
  outcome_.term_signal = term_signal;
  hard_timer_.cancel();
  idle_timer_.cancel();
  // Descendants may still hold the pipes: give them eof_grace, then end the group (the
  // leader's zombie still pins it). Not when the daemon held the write ends and no writer is
  // left now: the reads out end the streams on the loop's next pass, and a timer armed only to
  // be cancelled could still wake the loop for nothing eof_grace later.
  if (open_streams_ > 0 && !(held_output_ends_ && OutputEndsNow())) ArmEofGrace();
  // With the pipes closed, MaybeFinish ends what is left of the group at once.
  MaybeFinish();
}

void WorkerRun::ArmEofGrace() {
  if (std::exchange(eof_armed_, true)) return;
  eof_timer_.expires_after(limits_.eof_grace);
  eof_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    // Finished meanwhile (the handler was already queued): the leader is reaped, and its
    // group id may be someone else's now.
    if (ec || self->phase_ == Phase::kFinished) return;
    self->KillGroupIfPinned();
    self->grace_over_ = true;
    boost::system::error_code ignore;
    for (bool is_stdout : {true, false}) {
      auto& stream = is_stdout ? self->stdout_ : self->stderr_;
      if (self->paused_[is_stdout]) {
        // Not read while the writer catches up: the pipe holds the worker's last output.
        self->DrainPipe(is_stdout);
        stream.close(ignore);  // OnWritten ends the stream
      } else if (stream.is_open()) {
        // A read is out, perhaps done with its bytes queued behind this handler: closing now
        // would lose what the pipe holds after them. Its handler reads that and ends it.
        stream.cancel(ignore);
      }
    }
  });
}

bool WorkerRun::OutputEndsNow() {
  pollfd fds[2];
  nfds_t n = 0;
  for (bool is_stdout : {true, false}) {
    auto& stream = is_stdout ? stdout_ : stderr_;
    if (!stream.is_open()) continue;
    if (paused_[is_stdout]) return false;  // read again only as the writer catches up
    fds[n++] = pollfd{stream.native_handle(), POLLIN, 0};
  }
  if (n == 0) return true;
  if (poll(fds, n, 0) != static_cast<int>(n)) return false;
  for (nfds_t i = 0; i < n; ++i) {
    if ((fds[i].revents & POLLHUP) == 0) return false;  // a writer is left: a descendant
  }
  return true;
}

void WorkerRun::KillGroupIfPinned() {
  if (!reaped_elsewhere_) SignalGroup(child_.pid, SIGKILL);
}

void WorkerRun::SweepTree(TreeSweeper* sweeper, std::vector<std::string> env, bool sandboxed) {
  sweeper_ = sweeper;
  tree_env_ = std::move(env);
  sandboxed_ = sandboxed;
}

RunMarks WorkerRun::Marks() const {
  RunMarks m;
  m.leader = child_.pid;
  m.leader_start = child_.start_time;
  m.env = tree_env_;
  return m;
}

void WorkerRun::Reap() {
  if (reaped_elsewhere_) return;
  int status = 0;
  WaitPid(child_.pid, &status, WNOHANG);
  ChildRegistry::Instance().Untrack(child_.pid);
  ChildRegistry::Instance().ReapOrphans();  // orphans that waited behind this zombie
}

void WorkerRun::ArmIdleTimer() {
  if (limits_.idle_timeout.count() <= 0 && limits_.idle_kill.count() <= 0) return;
  // Check a few times per timeout so silence is noticed within a quarter of it.
  auto span = limits_.idle_timeout.count() > 0 ? limits_.idle_timeout : limits_.idle_kill;
  auto step = std::clamp<std::chrono::milliseconds>(span / 4, std::chrono::milliseconds(50),
                                                    std::chrono::seconds(1));
  idle_timer_.expires_after(step);
  idle_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->exited()) return;
    self->OnIdleTick();
    self->ArmIdleTimer();
  });
}

void WorkerRun::NoteActivity() {
  if (exited()) return;
  last_activity_ = std::chrono::steady_clock::now();
  silence_reported_.reset();
}

void WorkerRun::OnIdleTick() {
  ++idle_checks_;
  auto now = std::chrono::steady_clock::now();
  if (reading_paused()) {  // it waits at a pipe the daemon does not read: not idle
    last_activity_ = now;
    silence_reported_.reset();
    return;
  }
  // Idle only when silent AND inactive: the later of the last output and the last activity.
  auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(
      now - std::max(last_output_, last_activity_));
  if (limits_.idle_kill.count() > 0 && silent >= limits_.idle_kill && phase_ == Phase::kRunning) {
    outcome_.idle_killed = true;
    Terminate();
  } else if (limits_.idle_timeout.count() > 0 && silent >= limits_.idle_timeout &&
             !silence_reported_) {
    silence_reported_ = now;
    if (cb_.on_idle) cb_.on_idle(silent);
  }
}

void WorkerRun::Terminate() {
  if (phase_ != Phase::kRunning) return;
  phase_ = Phase::kTerminating;
  if (!sandboxed_ || !sweeper_) SignalGroup(child_.pid, SIGTERM);
  if (sweeper_) {
    RunMarks m = Marks();
    m.skip_leader_group = !sandboxed_;
    m.spare_leader_exe = sandboxed_;
    sweeper_->Signal(std::move(m), SIGTERM);
  }
  kill_timer_.expires_after(limits_.kill_grace);
  kill_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    // Reaped meanwhile (the handler was already queued): its pid may be someone else's now.
    if (ec || self->phase_ == Phase::kFinished) return;
    SignalGroup(self->child_.pid, SIGKILL);
    if (self->sweeper_) {
      RunMarks m = self->Marks();
      m.skip_leader_group = true;
      self->sweeper_->Signal(std::move(m), SIGKILL);
    }
  });
}

void WorkerRun::Stop(domain::StopReason reason, const std::string& detail) {
  if (finished() || outcome_.stop != domain::StopReason::kNone) return;
  outcome_.stop = reason;
  outcome_.stop_detail = detail;
  Terminate();
}

void WorkerRun::MaybeFinish() {
  if (phase_ != Phase::kExited || open_streams_ > 0) return;
  // The output ended after the leader exited: what is left of its group (a member that let
  // go of the pipes) goes now, while the leader's zombie still pins the group id.
  KillGroupIfPinned();
  Reap();
  if (sweeper_) sweeper_->SweepAfterExit(Marks());
  phase_ = Phase::kFinished;
  hard_timer_.cancel();
  idle_timer_.cancel();
  kill_timer_.cancel();
  eof_timer_.cancel();
  poll_timer_.cancel();
  // The outcome goes out once the logs are closed, after every chunk before it is written.
  auto cb = std::move(cb_.on_finished);
  if (unwritten_ == 0) {
    // Each chunk's OnWritten ran here: the writer is done with these logs (a silent run, such
    // as most commands, never had any), so no hop through its thread.
    logs_->Close();
    if (cb) cb(outcome_);
    return;
  }
  writer_->Post([logs = logs_, &io = io_, cb = std::move(cb), outcome = outcome_]() mutable {
    logs->Close();
    // Moved on: what the callback holds is let go on the loop.
    if (cb) PostToLoop(io, [cb = std::move(cb), outcome = std::move(outcome)] {
      cb(outcome);
    });
  });
}

}  // namespace conclave::exec
