// WaiterTable<V>: long-poll waiters parked on an id (a review, a flow) until it finishes.
// Park answers at once when the caller says the thing is already done; otherwise the waiter
// is answered with read(id) when Wake(id) is called or its timeout passes (default 30 s,
// at most 1 h) — a timed-out caller sees the thing as it stands. ExpireAll answers everyone
// now (shutdown). Each waiter is answered exactly once.
// Loop thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "service/write_then.h"

namespace conclave::service {

template <typename V>
class WaiterTable {
 public:
  using Read = std::function<StatusOr<V>(int64_t)>;
  WaiterTable(Clock& clock, Read read) : clock_(clock), read_(std::move(read)) {}

  void Park(int64_t id, int64_t timeout_ms, Done<V> done) {
    if (timeout_ms <= 0) timeout_ms = 30000;
    timeout_ms = std::min<int64_t>(timeout_ms, 3600 * 1000);
    auto w = std::make_shared<Waiter>();
    w->done = std::move(done);
    waiters_[id].push_back(w);
    w->alarm = clock_.After(timeout_ms, [this, id, w] {
      if (!w->done) return;
      auto& list = waiters_[id];
      list.erase(std::remove(list.begin(), list.end(), w), list.end());
      if (list.empty()) waiters_.erase(id);
      std::exchange(w->done, nullptr)(read_(id));
    });
  }

  void Wake(int64_t id) {
    auto it = waiters_.find(id);
    if (it == waiters_.end()) return;
    auto list = std::move(it->second);
    waiters_.erase(it);
    for (auto& w : list) {
      if (!w->done) continue;
      w->alarm.reset();
      std::exchange(w->done, nullptr)(read_(id));
    }
  }

  void ExpireAll() {
    std::vector<int64_t> ids;
    for (const auto& [id, list] : waiters_) ids.push_back(id);
    for (int64_t id : ids) Wake(id);
  }

  size_t count() const {
    size_t n = 0;
    for (const auto& [id, list] : waiters_) n += list.size();
    return n;
  }

 private:
  struct Waiter {
    Done<V> done;
    std::shared_ptr<Alarm> alarm;
  };
  Clock& clock_;
  Read read_;
  std::map<int64_t, std::vector<std::shared_ptr<Waiter>>> waiters_;
};

}  // namespace conclave::service
