#include "events/event_bus.h"

#include <algorithm>

namespace conclave::events {

EventBus::WaiterId EventBus::AddWaiter(domain::MessageFilter filter, int64_t after_seq,
                                       std::chrono::milliseconds timeout, int limit,
                                       WaitCallback cb) {
  WaiterId id = next_id_++;
  auto timer = std::make_unique<boost::asio::steady_timer>(io_, timeout);
  timer->async_wait([this, id](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: the waiter was completed or dropped
    auto it = waiters_.find(id);
    if (it == waiters_.end()) return;
    WaitCallback done = std::move(it->second.cb);
    waiters_.erase(it);
    done({});
  });
  waiters_.emplace(id, Waiter{std::move(filter), after_seq, limit, std::move(cb), std::move(timer)});
  return id;
}

void EventBus::CancelWaiter(WaiterId id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return;
  it->second.timer->cancel();
  waiters_.erase(it);
}

EventBus::WaiterId EventBus::AddWatcher(domain::MessageFilter filter, int64_t after_seq,
                                        WatchCallback cb) {
  WaiterId id = next_id_++;
  watchers_.emplace(id, Watcher{std::move(filter), after_seq, std::move(cb)});
  return id;
}

void EventBus::RemoveWatcher(WaiterId id) { watchers_.erase(id); }

void EventBus::Publish(const std::vector<domain::MessageRecord>& messages) {
  for (const auto& m : messages) last_seq_ = std::max(last_seq_, m.seq);
  std::vector<std::pair<WaitCallback, std::vector<domain::MessageRecord>>> ready;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    std::vector<domain::MessageRecord> matched;
    for (const auto& m : messages) {
      if (m.seq > it->second.after_seq && it->second.filter.Matches(m)) {
        matched.push_back(m);
        if (static_cast<int>(matched.size()) >= it->second.limit) break;
      }
    }
    if (matched.empty()) {
      ++it;
      continue;
    }
    it->second.timer->cancel();
    ready.emplace_back(std::move(it->second.cb), std::move(matched));
    it = waiters_.erase(it);
  }
  // Callbacks run after the map is consistent: one may add a new waiter.
  for (auto& [cb, matched] : ready) cb(std::move(matched));

  for (auto it = watchers_.begin(); it != watchers_.end();) {
    bool keep = true;
    for (const auto& m : messages) {
      if (m.seq <= it->second.after_seq || !it->second.filter.Matches(m)) continue;
      it->second.after_seq = m.seq;
      if (!it->second.cb(m)) {
        keep = false;
        break;
      }
    }
    it = keep ? std::next(it) : watchers_.erase(it);
  }
}

void EventBus::ExpireAll() {
  auto all = std::move(waiters_);
  waiters_.clear();
  for (auto& [id, w] : all) {
    w.timer->cancel();
    w.cb({});
  }
}

}  // namespace conclave::events
