#include "common/clock.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

namespace conclave {
namespace {

class TimerAlarm final : public Alarm {
 public:
  explicit TimerAlarm(boost::asio::io_context& io) : timer_(io) {}
  ~TimerAlarm() override { timer_.cancel(); }
  void Cancel() override { timer_.cancel(); }
  boost::asio::steady_timer& timer() { return timer_; }

 private:
  boost::asio::steady_timer timer_;
};

}  // namespace

std::shared_ptr<Alarm> SystemClock::Schedule(int64_t at_ms, std::function<void()> fn) {
  auto alarm = std::make_shared<TimerAlarm>(io_);
  int64_t delay = at_ms - NowMs();
  alarm->timer().expires_after(std::chrono::milliseconds(delay > 0 ? delay : 0));
  // The timer holds no owning reference: dropping the alarm cancels it.
  alarm->timer().async_wait([fn = std::move(fn)](const boost::system::error_code& ec) {
    if (!ec) fn();
  });
  return alarm;
}

}  // namespace conclave
