// PollWindow: whether a loop that found nothing to do polls for work a while (max) before it
// sleeps, learnt from how its idle spells went.
//
// Sleeping costs a wake-up: the thread that brings work pays for waking the sleeper and the
// sleeper for being woken, and on a VM whose idle vCPUs halt at once (this project's 2-core
// test machines: haltpoll with guest_halt_poll_ns=0) that is a halt and an interrupt on each
// side. A client that waits for each reply before sending its next request idles the daemon
// only for the few tens of µs of its side of the round trip; polling through them keeps both
// awake. Polling through longer spells only burns CPU, so the loop polls while it pays, by
// credit (from -8 to 4; it polls while the credit is above 0):
//   - a poll that work ended earns 1;
//   - a poll that work did not end costs 8: one such poll stops the polling;
//   - a spell slept through at once earns 1 if a client's call ended it and it was short enough
//     for a poll to have had a chance: at most reach (4 × max), as the loop saw it, its own
//     wake-up included (a 30 µs gap read as 80-170 µs on those machines). A spell the loop's
//     own work ended (a worker's spawn, output or exit, a timer, a helper's post) earns nothing:
//     that work takes hundreds of µs and more, and comes whether the loop polls or not.
// So an idle daemon never polls (its spells are long); calls that keep coming within max are
// polled for; calls that come a little later than max are polled for once in nine spells; and
// each burst of calls after a long idle spell costs at most one wasted poll. max 0 never polls.
// Thread-safety: none (the loop's thread).
#pragma once

#include <chrono>

namespace conclave {

class PollWindow {
 public:
  using Nanos = std::chrono::nanoseconds;
  explicit PollWindow(Nanos max) : max_(max < Nanos(0) ? Nanos(0) : max) {}
  // How long to poll before sleeping now (0: sleep at once).
  Nanos window() const { return credit_ > 0 ? max_ : Nanos(0); }
  Nanos max() const { return max_; }
  Nanos reach() const { return max_ * 4; }
  // How an idle spell, begun with window(), ended.
  enum class Ended {
    kPolling,  // work came while the loop polled
    kCall,     // sleeping: a client's call
    kOther,    // sleeping: anything else (the loop's own work, its idle cap, a shutdown)
  };
  // An idle spell ended after `idle` (polling and sleeping).
  void Idled(Nanos idle, Ended how);

 private:
  static constexpr int kMaxCredit = 4;
  static constexpr int kMissCost = 8;
  static constexpr int kMinCredit = -8;
  static_assert(kMissCost >= kMaxCredit, "one poll that work did not end stops the polling");
  const Nanos max_;
  int credit_ = 0;
};

}  // namespace conclave
