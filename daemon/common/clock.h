// Clock: wall-clock time and timers for the service loop, behind a small interface so tests
// drive time by hand (tests/support/fake_clock.h) instead of sleeping.
// NowMs(): milliseconds since the epoch — what the store records and clients see.
// Schedule(at_ms, fn): runs fn on the loop once the clock reaches at_ms (or soon after);
// cancelling the returned alarm (or dropping the last reference to it) stops it.
// Thread-safety: loop thread only (NowMs() may be called anywhere).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

namespace boost::asio {
class io_context;
}

namespace conclave {

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class Alarm {
 public:
  virtual ~Alarm() = default;
  virtual void Cancel() = 0;
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowMs() const = 0;
  virtual std::shared_ptr<Alarm> Schedule(int64_t at_ms, std::function<void()> fn) = 0;
  std::shared_ptr<Alarm> After(int64_t delay_ms, std::function<void()> fn) {
    return Schedule(NowMs() + delay_ms, std::move(fn));
  }
};

// The real clock: system time, asio steady timers on the given loop.
class SystemClock final : public Clock {
 public:
  explicit SystemClock(boost::asio::io_context& io) : io_(io) {}
  int64_t NowMs() const override { return conclave::NowMs(); }
  std::shared_ptr<Alarm> Schedule(int64_t at_ms, std::function<void()> fn) override;

 private:
  boost::asio::io_context& io_;
};

}  // namespace conclave
