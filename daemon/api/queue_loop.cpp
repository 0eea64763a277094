#include "api/queue_loop.h"

#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <boost/asio/detail/epoll_reactor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <spdlog/spdlog.h>
#include <vector>

#include "common/loop_kick.h"
#include "common/runtime.h"
#include "common/thread_name.h"

namespace conclave::api {
namespace {

constexpr int kCallsPerTurn = 32;     // calls delivered before Asio's handlers run regardless
constexpr int kHandlersPerTurn = 64;  // Asio's handlers run before the queue is polled again
// The loop polls only while the last RecentCallers::kSpan requests came on at most this many
// connections: a client waiting for each reply, and one more (a Wait parked by another, as a
// plugin's; a second client in turn).
constexpr int kMostPollCallers = 2;

// The data of every entry of an epoll descriptor's fdinfo ("tfd: N events: E data: HEX ...").
std::vector<uintptr_t> EntriesData(int fd) {
  std::vector<uintptr_t> out;
  std::ifstream in("/proc/self/fdinfo/" + std::to_string(fd));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("tfd:", 0) != 0) continue;
    auto at = line.find("data:");
    if (at == std::string::npos) continue;
    out.push_back(static_cast<uintptr_t>(std::strtoull(line.c_str() + at + 5, nullptr, 16)));
  }
  return out;
}

}  // namespace

int QueueLoop::FindReactorFd(boost::asio::io_context& io, std::string* why) {
#if defined(BOOST_ASIO_HAS_EPOLL)
  // The reactor registers its interrupter and its timerfd with their own addresses as data. A
  // timer's service makes the scheduler run the reactor (io_context::poll runs it only then);
  // without a timerfd a timer would never make the descriptor ready.
  { boost::asio::steady_timer made_for_its_service(io); }
  auto& reactor = boost::asio::use_service<boost::asio::detail::epoll_reactor>(io);
  const auto lo = reinterpret_cast<uintptr_t>(&reactor);
  const uintptr_t hi = lo + sizeof(reactor);
  std::vector<int> found;
  try {
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
      std::error_code link_ec;
      if (std::filesystem::read_symlink(e.path(), link_ec).string() != "anon_inode:[eventpoll]") {
        continue;
      }
      const int fd = std::atoi(e.path().filename().c_str());
      int inside = 0;
      for (uintptr_t data : EntriesData(fd)) inside += data >= lo && data < hi;
      if (inside >= 2) found.push_back(fd);
    }
  } catch (const std::filesystem::filesystem_error& e) {
    *why = std::string("cannot list /proc/self/fd: ") + e.what();
    return -1;
  }
  if (found.size() == 1) return found[0];
  *why = "Asio's reactor descriptor, with its interrupter and timerfd, not found in "
         "/proc/self/fdinfo (" + std::to_string(found.size()) + " candidates)";
  return -1;
#else
  (void)io;
  *why = "Asio's reactor is not epoll";
  return -1;
#endif
}

QueueLoop::QueueLoop(boost::asio::io_context& io, int reactor_fd,
                     std::chrono::milliseconds idle_cap, std::chrono::microseconds poll_max)
    : io_(io), reactor_fd_(reactor_fd), idle_cap_(idle_cap), poll_(poll_max) {
  outer_ = epoll_create1(EPOLL_CLOEXEC);
  stop_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event reactor{};
  reactor.events = EPOLLIN | EPOLLONESHOT;
  reactor.data.fd = reactor_fd_;
  epoll_event stop{};
  stop.events = EPOLLIN;
  stop.data.fd = stop_;
  if (outer_ < 0 || stop_ < 0 || reactor_fd_ < 0 ||
      epoll_ctl(outer_, EPOLL_CTL_ADD, reactor_fd_, &reactor) != 0 ||
      epoll_ctl(outer_, EPOLL_CTL_ADD, stop_, &stop) != 0) {
    why_ = std::string("the loop's watcher: ") + std::strerror(errno);
    return;
  }
  watcher_ = std::thread([this] { Watch(); });
  NameThread(watcher_, "loop-watch");
}

QueueLoop::~QueueLoop() {
  if (watcher_.joinable()) {
    uint64_t one = 1;
    (void)!write(stop_, &one, sizeof one);
    watcher_.join();
  }
  if (outer_ >= 0) close(outer_);
  if (stop_ >= 0) close(stop_);
}

void QueueLoop::Watch() {
  EndBackgroundThreads();  // SCHED_OTHER: a timer or a worker's output wakes the loop at once
  for (;;) {
    epoll_event e[2];
    int n = epoll_wait(outer_, e, 2, -1);
    if (n < 0 && errno != EINTR) {
      // Timers and workers' output then wake the loop only at its idle cap.
      spdlog::critical("the loop's watcher stops: epoll_wait: {}", std::strerror(errno));
      return;
    }
    for (int i = 0; i < n; ++i) {
      if (e[i].data.fd == stop_) return;
      fired_.store(true);
      KickLoop(io_);
    }
  }
}

void QueueLoop::Rearm() {
  if (!fired_.exchange(false)) return;
  epoll_event reactor{};
  reactor.events = EPOLLIN | EPOLLONESHOT;
  reactor.data.fd = reactor_fd_;
  if (epoll_ctl(outer_, EPOLL_CTL_MOD, reactor_fd_, &reactor) != 0) {
    spdlog::critical("the loop's watcher is not re-armed: {}", std::strerror(errno));
  }
}

size_t QueueLoop::PollAsio() {
  // At most kHandlersPerTurn: io_context::poll runs until nothing is ready, and a worker that
  // prints fast keeps a read ready for as long as it prints.
  size_t ran = 0;
  try {
    while (ran < kHandlersPerTurn && io_.poll_one() > 0) ++ran;
  } catch (const std::exception& e) {
    spdlog::critical("unhandled error on the loop (continuing): {}", e.what());
    ++ran;  // the rest of what was ready runs on the next turn
  }
  return ran;
}

void QueueLoop::Run(CallQueue& queue) {
  if (ok() && queue.polled() && queue.ClaimPolling()) {
    SetLoopKick(io_, &queue);
    struct Unkick {
      boost::asio::io_context& io;
      ~Unkick() { SetLoopKick(io, nullptr); }  // also when a call's handler throws
    } unkick{io_};
    auto work = boost::asio::make_work_guard(io_);  // io_.poll_one() with no work stops io_
    if (poll_.max().count() > 0) queue.CountCallers();
    Serve(queue);
    // The queue is shut down and drained: from here Asio's own wakes serve.
  }
  RunAsio(io_);
}

void QueueLoop::Serve(CallQueue& queue) {
  using Polled = CallQueue::Polled;
  const gpr_timespec now = gpr_time_0(GPR_CLOCK_MONOTONIC);
  int empty = 0, calls = 0;
  bool asio_due = false;  // a wake (or the cap) says Asio has work: no queue poll first
  bool capped = false;
  for (;;) {
    if (!asio_due) {
      const Polled got = queue.Poll(now);
      if (got == Polled::kShutdown) return;
      if (got == Polled::kTimeout) ++empty;
      if (got == Polled::kCall) {
        empty = 0;
        ++calls;
      }
      if (got != Polled::kWake && empty < 2 && calls < kCallsPerTurn) continue;
    }
    asio_due = false;
    empty = calls = 0;
    const size_t ran = PollAsio();
    if (capped && ran > 0) late_.fetch_add(static_cast<int64_t>(ran));
    capped = false;
    Rearm();
    if (ran > 0) continue;
    const auto idle_from = std::chrono::steady_clock::now();
    const bool gated = poll_.window().count() > 0 &&
                       ((gate_ && !gate_()) || queue.recent_callers() > kMostPollCallers);
    Polled got = gated ? Polled::kTimeout : PollFor(queue, now, idle_from + poll_.window());
    const bool caught = got != Polled::kTimeout;
    if (!caught) {
      waits_.fetch_add(1);
      const gpr_timespec until =
          idle_cap_.count() == 0
              ? gpr_inf_future(GPR_CLOCK_MONOTONIC)
              : gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                             gpr_time_from_millis(idle_cap_.count(), GPR_TIMESPAN));
      got = queue.Poll(until);
      if (got == Polled::kTimeout) {
        capped_.fetch_add(1);
        capped = true;
      }
    }
    using Ended = PollWindow::Ended;
    if (!gated) {  // a spell the gate kept from polling tells nothing of polling
      poll_.Idled(std::chrono::steady_clock::now() - idle_from,
                  caught ? Ended::kPolling : got == Polled::kCall ? Ended::kCall : Ended::kOther);
    }
    if (got == Polled::kShutdown) return;
    asio_due = got != Polled::kCall;
  }
}

CallQueue::Polled QueueLoop::PollFor(CallQueue& queue, gpr_timespec now,
                                     std::chrono::steady_clock::time_point until) {
  if (poll_.window().count() == 0) return CallQueue::Polled::kTimeout;
  counts_.polls.fetch_add(1);
  CallQueue::Polled got;
  do {
    sched_yield();  // a thread ready on this CPU (a client, a worker) runs first
    got = queue.Poll(now);
  } while (got == CallQueue::Polled::kTimeout && std::chrono::steady_clock::now() < until);
  if (got == CallQueue::Polled::kCall || got == CallQueue::Polled::kWake) {
    counts_.caught.fetch_add(1);
  }
  return got;
}

void RunAsio(boost::asio::io_context& io) {
  for (;;) {
    try {
      io.run();
      return;
    } catch (const std::exception& e) {
      spdlog::critical("unhandled error on the loop (continuing): {}", e.what());
    }
  }
}

}  // namespace conclave::api
