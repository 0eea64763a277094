#include "events/event_bus.h"

#include <algorithm>

namespace conclave::events {
namespace {

template <typename Map, typename Key>
void AddTo(Map& m, const Key& k, EventBus::WaiterId id) {
  m[k].insert(id);
}

template <typename Map, typename Key>
void RemoveFrom(Map& m, const Key& k, EventBus::WaiterId id) {
  auto it = m.find(k);
  if (it == m.end()) return;
  it->second.erase(id);
  if (it->second.empty()) m.erase(it);  // one-off handles must not leave buckets behind
}

}  // namespace

void EventBus::File(WaiterId id, const domain::MessageFilter& f) {
  if (!f.task_ids.empty()) {
    for (int64_t t : f.task_ids) AddTo(by_task_, t, id);
  } else if (!f.to.empty()) {
    AddTo(by_to_, f.to, id);
  } else if (!f.types.empty()) {
    for (const auto& t : f.types) AddTo(by_type_, t, id);
  } else if (!f.from.empty()) {
    AddTo(by_from_, f.from, id);
  } else {
    unfiltered_.insert(id);
  }
}

void EventBus::Unfile(WaiterId id, const domain::MessageFilter& f) {
  if (!f.task_ids.empty()) {
    for (int64_t t : f.task_ids) RemoveFrom(by_task_, t, id);
  } else if (!f.to.empty()) {
    RemoveFrom(by_to_, f.to, id);
  } else if (!f.types.empty()) {
    for (const auto& t : f.types) RemoveFrom(by_type_, t, id);
  } else if (!f.from.empty()) {
    RemoveFrom(by_from_, f.from, id);
  } else {
    unfiltered_.erase(id);
  }
}

EventBus::WaitCallback EventBus::Take(WaiterId id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return nullptr;
  Unfile(id, it->second.filter);
  it->second.timer->cancel();
  WaitCallback cb = std::move(it->second.cb);
  waiters_.erase(it);
  return cb;
}

EventBus::WaiterId EventBus::AddWaiter(domain::MessageFilter filter, int64_t after_seq,
                                       std::chrono::milliseconds timeout, int limit,
                                       WaitCallback cb) {
  WaiterId id = next_id_++;
  auto timer = std::make_unique<boost::asio::steady_timer>(io_, timeout);
  timer->async_wait([this, id](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: the waiter was completed or dropped
    WaitCallback done = Take(id);
    if (done) done({});
  });
  File(id, filter);
  waiters_.emplace(id, Waiter{std::move(filter), after_seq, limit, std::move(cb), std::move(timer)});
  return id;
}

void EventBus::CancelWaiter(WaiterId id) { Take(id); }

EventBus::WaiterId EventBus::AddWatcher(domain::MessageFilter filter, int64_t after_seq,
                                        WatchCallback cb) {
  WaiterId id = next_id_++;
  watchers_.emplace(id, Watcher{std::move(filter), after_seq, std::move(cb)});
  return id;
}

void EventBus::RemoveWatcher(WaiterId id) { watchers_.erase(id); }

void EventBus::Publish(const std::vector<domain::MessageRecord>& messages) {
  for (const auto& m : messages) last_seq_ = std::max(last_seq_, m.seq);
  // Matches per waiter, in waiter order; messages arrive ascending, so each list is too.
  std::map<WaiterId, std::vector<domain::MessageRecord>> matched;
  auto offer = [&](const Bucket& bucket, const domain::MessageRecord& m) {
    for (WaiterId id : bucket) {
      const Waiter& w = waiters_.at(id);
      ++filter_checks_;
      if (m.seq <= w.after_seq || !w.filter.Matches(m)) continue;
      auto& got = matched[id];
      if (got.empty() || static_cast<int>(got.size()) < w.limit) got.push_back(m);
    }
  };
  auto offer_in = [&](const auto& map, const auto& key, const domain::MessageRecord& m) {
    auto it = map.find(key);
    if (it != map.end()) offer(it->second, m);
  };
  if (!waiters_.empty()) {
    for (const auto& m : messages) {
      offer_in(by_task_, m.task_id, m);
      offer_in(by_to_, m.to, m);
      offer_in(by_type_, m.type, m);
      offer_in(by_from_, m.from, m);
      offer(unfiltered_, m);
    }
  }
  std::vector<std::pair<WaitCallback, std::vector<domain::MessageRecord>>> ready;
  ready.reserve(matched.size());
  for (auto& [id, ms] : matched) ready.emplace_back(Take(id), std::move(ms));
  // Callbacks run after the buckets are consistent: one may add a new waiter.
  for (auto& [cb, ms] : ready) cb(std::move(ms));

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
  std::vector<WaiterId> ids;
  ids.reserve(waiters_.size());
  for (const auto& [id, w] : waiters_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  std::vector<WaitCallback> cbs;
  for (WaiterId id : ids) cbs.push_back(Take(id));
  for (auto& cb : cbs) cb({});
}

}  // namespace conclave::events
