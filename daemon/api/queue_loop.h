// QueueLoop: the daemon's loop on one thread that serves both gRPC's completion queue (the
// API's calls, api/async_calls.h) and Asio's io_context (the state, timers, workers' pipes,
// signals), with no thread between them. With a queue thread every request costs a hop: that
// thread wakes, runs the handler, posts to the loop and wakes it (README, Performance, "The
// queue on the loop's thread").
//
// The loop polls the queue without waiting and, after two empty polls in a row (gRPC's poller
// hands over one ready connection a poll), 32 calls or a wake, runs Asio's ready handlers (at
// most 64: a worker printing fast keeps a read ready). When those were none it waits in the
// queue, after polling it for the poll window (common/poll_window.h: up to poll_max, while a
// credit earned by calls says polling pays, the last requests came on few connections
// (common/recent_callers.h) and SetPollGate allows it; 0 never), giving way to any thread
// ready on its CPU between polls. What Asio has for it then wakes it through the queue
// (CallQueue::Kick): a post from another thread through PostToLoop (common/loop_kick.h); a
// timer, a descriptor or a signal through the watcher thread, which waits on Asio's reactor's
// epoll descriptor (EPOLLONESHOT, re-armed after the loop's next turn of Asio). A wait also
// ends after idle_cap (0: never); handlers found ready after such a wait are counted
// (late_handlers): a wake that never came.
//
// While the loop polls the queue, Boost 1.74's scheduler counts its reactor as interrupted
// (task_interrupted_, set after every poll and cleared only by a thread that waits in it): a
// plain post from another thread wakes nothing, so every such post must be a PostToLoop. The
// same holds for Asio's own completions across io_contexts (a signal_set's shared pipe read by
// another io_context): conclaved has one io_context with signals.
//
// Asio's reactor keeps its descriptor private; FindReactorFd finds it in /proc/self/fdinfo, as
// the epoll descriptor one of whose entries points into the reactor. Without it the daemon
// runs the queue on its own thread, as before.
// Thread-safety: Run on the loop's thread; the counters from any thread.
#pragma once

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "api/async_calls.h"
#include "common/poll_counts.h"
#include "common/poll_window.h"

namespace conclave::api {

class QueueLoop {
 public:
  // Asio's reactor's epoll descriptor for io (creating the reactor); -1 and why when not found.
  static int FindReactorFd(boost::asio::io_context& io, std::string* why);
  // Starts the watcher ("loop-watch"); ok() false (with why) when it could not.
  QueueLoop(boost::asio::io_context& io, int reactor_fd, std::chrono::milliseconds idle_cap,
            std::chrono::microseconds poll_max = std::chrono::microseconds(0));
  ~QueueLoop();
  QueueLoop(const QueueLoop&) = delete;
  QueueLoop& operator=(const QueueLoop&) = delete;
  bool ok() const { return watcher_.joinable(); }
  // Polls only while gate() (on the loop's thread) says the daemon may: conclaved's is false
  // while it runs workers or commands, whose CPU the poll would take (a sched_yield does not
  // make way for a nicer process). Before Run.
  void SetPollGate(std::function<bool()> gate) { gate_ = std::move(gate); }
  const std::string& why() const { return why_; }
  // Serves the queue (polled, CallQueue::Start) and io until the queue shut down, then runs io
  // until it stops. An Asio handler that throws is logged and the loop goes on; a call's
  // handler that throws ends the daemon, as it did on the queue's own thread.
  void Run(CallQueue& queue);

  int64_t waits() const { return waits_.load(); }            // waits in the queue
  int64_t capped_waits() const { return capped_.load(); }    // of them, ended by idle_cap
  int64_t late_handlers() const { return late_.load(); }     // Asio's work found after one
  int64_t polls() const { return counts_.polls.load(); }
  int64_t caught() const { return counts_.caught.load(); }
  const PollCounts& poll_counts() const { return counts_; }

 private:
  void Serve(CallQueue& queue);
  void Watch();
  size_t PollAsio();
  // Polls the queue until a completion or `until` (none when the window is 0): kTimeout if
  // nothing came.
  CallQueue::Polled PollFor(CallQueue& queue, gpr_timespec now,
                            std::chrono::steady_clock::time_point until);
  void Rearm();
  boost::asio::io_context& io_;
  const int reactor_fd_;
  const std::chrono::milliseconds idle_cap_;
  PollWindow poll_;
  std::function<bool()> gate_;
  int outer_ = -1;    // the watcher's epoll: the reactor's descriptor and stop_
  int stop_ = -1;     // eventfd: the watcher ends
  std::atomic<bool> fired_{false};  // the watcher saw the reactor ready; Rearm re-arms it
  std::atomic<int64_t> waits_{0}, capped_{0}, late_{0};
  PollCounts counts_;
  std::string why_;
  std::thread watcher_;
};

// Runs io until it stops; a handler that throws is logged and the loop goes on.
void RunAsio(boost::asio::io_context& io);

}  // namespace conclave::api
