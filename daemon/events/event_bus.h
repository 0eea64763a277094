// EventBus: wakes long-poll waiters and feeds stream watchers with committed messages.
// Nothing polls: a waiter is a filter, a cursor and a deadline timer; Publish() (called by
// the commit batcher after COMMIT) completes every waiter whose filter matches. Each waiter
// is checked independently, so a slow client never holds up another.
// Waiters are indexed by the most selective thing they filter on — task id, else recipient,
// else type, else sender; the rest are "unfiltered" — so a committed message is checked only
// against the waiters it could wake, however many are parked. Waiters with several task ids
// or types sit in one bucket per value; a message has one of each, so it meets a waiter once.
// Thread-safety: loop thread only. Callbacks run on the loop thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
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
  // Waiter filter checks Publish() made so far (to test that it skips unrelated waiters).
  uint64_t FilterChecksForTest() const { return filter_checks_; }
  size_t watcher_count() const { return watchers_.size(); }

 private:
  struct Waiter {
    domain::MessageFilter filter;
    int64_t after_seq;
    int limit;
    WaitCallback cb;
    std::unique_ptr<boost::asio::steady_timer> timer;
  };
  // Bucket id sets are ordered, so waiters wake in the order they were parked.
  using Bucket = std::set<WaiterId>;
  // The buckets the waiter is filed in (by its filter); Unfile removes it from them.
  void File(WaiterId id, const domain::MessageFilter& f);
  void Unfile(WaiterId id, const domain::MessageFilter& f);
  // Removes the waiter; returns its callback (timer cancelled).
  WaitCallback Take(WaiterId id);
  struct Watcher {
    domain::MessageFilter filter;
    int64_t after_seq;
    WatchCallback cb;
  };

  boost::asio::io_context& io_;
  WaiterId next_id_ = 1;
  int64_t last_seq_ = 0;
  uint64_t filter_checks_ = 0;
  std::unordered_map<WaiterId, Waiter> waiters_;
  std::unordered_map<int64_t, Bucket> by_task_;
  std::unordered_map<std::string, Bucket> by_to_;
  std::unordered_map<std::string, Bucket> by_type_;
  std::unordered_map<std::string, Bucket> by_from_;
  Bucket unfiltered_;
  std::map<WaiterId, Watcher> watchers_;
};

}  // namespace conclave::events
