// EventBus: wakes long-poll waiters and feeds stream watchers with committed messages.
// Nothing polls: a waiter is a filter, a cursor and a deadline timer; Publish() (called by
// the commit batcher after COMMIT) completes every waiter whose filter matches. Each waiter
// is checked independently, so a slow client never holds up another.
// Thread-safety: loop thread only. Callbacks run on the loop thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "domain/message.h"

namespace conclave::events {

class EventBus {
 public:
  using WaiterId = uint64_t;
  // Called once: with the matched messages, or with an empty vector at the deadline.
  using WaitCallback = std::function<void(std::vector<domain::MessageRecord>)>;
  // Called for every matching committed message; return false to unsubscribe.
  using WatchCallback = std::function<bool(const domain::MessageRecord&)>;

  explicit EventBus(boost::asio::io_context& io) : io_(io) {}

  WaiterId AddWaiter(domain::MessageFilter filter, int64_t after_seq,
                     std::chrono::milliseconds timeout, int limit, WaitCallback cb);
  // Drops a waiter without calling it (client went away). Safe for unknown ids.
  void CancelWaiter(WaiterId id);

  WaiterId AddWatcher(domain::MessageFilter filter, int64_t after_seq, WatchCallback cb);
  void RemoveWatcher(WaiterId id);

  // Delivers committed messages (ascending seq).
  void Publish(const std::vector<domain::MessageRecord>& messages);

  // Completes every waiter now with an empty result (shutdown).
  void ExpireAll();

  // The highest committed seq seen (seeded at startup): the safe cursor for a timed-out wait.
  int64_t last_seq() const { return last_seq_; }
  void SeedLastSeq(int64_t seq) { last_seq_ = seq; }

  size_t waiter_count() const { return waiters_.size(); }
  size_t watcher_count() const { return watchers_.size(); }

 private:
  struct Waiter {
    domain::MessageFilter filter;
    int64_t after_seq;
    int limit;
    WaitCallback cb;
    std::unique_ptr<boost::asio::steady_timer> timer;
  };
  struct Watcher {
    domain::MessageFilter filter;
    int64_t after_seq;
    WatchCallback cb;
  };

  boost::asio::io_context& io_;
  WaiterId next_id_ = 1;
  int64_t last_seq_ = 0;
  std::map<WaiterId, Waiter> waiters_;
  std::map<WaiterId, Watcher> watchers_;
};

}  // namespace conclave::events
