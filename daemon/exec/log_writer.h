// LogWriter: the thread that writes worker output to disk, so the loop never does. A WorkerRun
// reads and redacts its worker's output on the loop, then hands each redacted chunk here; the
// write into transcript.log and stdout.log (exec/capped_log: page-cache copies, a file made
// with the first byte) runs on this thread, and the run learns on the loop that it is written.
// Under load those writes were a third of the loop's time (README, Performance).
// Jobs run one at a time in the order posted, so a run's chunks land in order and its logs'
// Close comes after its last chunk. The thread runs child_nice nicer than the daemon (as the
// workers whose output it writes, exec::SetChildNice) and SCHED_BATCH (common/runtime.h), so
// with every core busy it gets a small share beside the loop and the API threads (about a
// tenth at nice 10); a worker that prints faster than it writes is held back by its pipe
// (WorkerRun stops reading past a bound of unwritten bytes).
// Close (and the destructor) runs what is queued, then ends the thread; a job posted once the
// thread has ended runs at once on the caller's thread (one posted while it drains is queued).
// A job that throws is logged and dropped.
// Thread-safety: Post and Close from any thread; jobs run on the writer's thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace conclave::exec {

class LogWriter {
 public:
  LogWriter();
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;
  ~LogWriter();

  void Post(std::function<void()> job);
  void Close();

 private:
  void ThreadMain();
  static void RunJob(std::function<void()>& job);

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool closed_ = false;
  bool exited_ = false;  // the thread has run its last job: Post runs a job itself
  std::mutex join_mu_;   // one Close joins
  std::thread thread_;
};

}  // namespace conclave::exec
