// FakeClock: a Clock whose time moves only when a test says so. Alarms fire, in time order, on
// Advance() — the test then runs the loop to let what they started finish. No sleeps.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "common/clock.h"

namespace conclave::testing {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_ms = 1'700'000'000'000) : now_(start_ms) {}

  int64_t NowMs() const override { return now_; }

  std::shared_ptr<Alarm> Schedule(int64_t at_ms, std::function<void()> fn) override {
    auto a = std::make_shared<FakeAlarm>();
    a->at = at_ms;
    a->fn = std::move(fn);
    alarms_.push_back(a);
    return a;
  }

  // Moves time forward by ms, firing every alarm that comes due (earliest first).
  void Advance(int64_t ms) {
    int64_t target = now_ + ms;
    for (;;) {
      Prune();
      auto next = std::min_element(alarms_.begin(), alarms_.end(),
                                   [](const auto& a, const auto& b) { return a.lock()->at < b.lock()->at; });
      if (next == alarms_.end() || next->lock()->at > target) break;
      auto a = next->lock();
      alarms_.erase(next);
      now_ = std::max(now_, a->at);
      if (!a->cancelled) a->fn();
    }
    now_ = target;
  }

  // Alarms still waiting (not cancelled, not dropped).
  size_t pending() {
    Prune();
    return alarms_.size();
  }

 private:
  struct FakeAlarm : Alarm {
    int64_t at = 0;
    std::function<void()> fn;
    bool cancelled = false;
    void Cancel() override { cancelled = true; }
  };
  void Prune() {
    alarms_.erase(std::remove_if(alarms_.begin(), alarms_.end(),
                                 [](const auto& w) { return w.expired() || w.lock()->cancelled; }),
                  alarms_.end());
  }

  int64_t now_;
  std::vector<std::weak_ptr<FakeAlarm>> alarms_;
};

}  // namespace conclave::testing
