// Unit tests: when the loop polls before it sleeps (common/poll_window.h). Each case drives the
// window with idle spells as the loop would see them and checks when it polls.
#include <catch2/catch.hpp>

#include <chrono>

#include "common/poll_window.h"

namespace conclave {
namespace {

using std::chrono::microseconds;
using Ended = PollWindow::Ended;

constexpr microseconds kMax{50};  // reach: 200 µs

// Spells slept through at once, each `idle` long, each ended by a call (or `how`).
void Slept(PollWindow& w, microseconds idle, int n = 1, Ended how = Ended::kCall) {
  for (int i = 0; i < n; ++i) {
    REQUIRE(w.window().count() == 0);
    w.Idled(idle, how);
  }
}

TEST_CASE("a loop that was never idle sleeps at once and so does one with max 0", "[poll_window]") {
  PollWindow w(kMax);
  CHECK(w.window().count() == 0);
  CHECK(w.reach() == microseconds(200));
  PollWindow never(microseconds(0));
  for (int i = 0; i < 20; ++i) never.Idled(microseconds(10), Ended::kCall);
  CHECK(never.window().count() == 0);
  PollWindow negative(microseconds(-5));
  CHECK(negative.max().count() == 0);
}

TEST_CASE("one short spell slept through makes the next one polled for max", "[poll_window]") {
  PollWindow w(kMax);
  Slept(w, microseconds(150));
  CHECK(w.window() == kMax);
}

TEST_CASE("short spells the loop's own work ended never start polling", "[poll_window]") {
  // A worker's spawn or exit, a timer, a helper's post: it comes whether the loop polls or not.
  PollWindow w(kMax);
  Slept(w, microseconds(100), 50, Ended::kOther);
  CHECK(w.window().count() == 0);
  Slept(w, microseconds(100));
  REQUIRE(w.window() == kMax);
  // Polled for, but ended by such work only after the poll: a miss like any other.
  w.Idled(microseconds(150), Ended::kOther);
  CHECK(w.window().count() == 0);
}

TEST_CASE("spells longer than reach never start polling", "[poll_window]") {
  PollWindow w(kMax);
  Slept(w, microseconds(201), 50);
  CHECK(w.window().count() == 0);
  Slept(w, microseconds(200));  // reach itself is short enough
  CHECK(w.window() == kMax);
}

TEST_CASE("polls that work ends keep the loop polling and one long spell stops it",
          "[poll_window]") {
  PollWindow w(kMax);
  Slept(w, microseconds(100));
  for (int i = 0; i < 100; ++i) {
    REQUIRE(w.window() == kMax);
    w.Idled(microseconds(30), Ended::kPolling);
  }
  // A poll that nothing ended, then a long sleep: the credit is gone at once.
  w.Idled(microseconds(5000), Ended::kCall);
  CHECK(w.window().count() == 0);
  Slept(w, microseconds(5000), 3);
}

TEST_CASE("a long spell leaves no credit even after many polls that work ended", "[poll_window]") {
  PollWindow w(kMax);
  Slept(w, microseconds(100));
  for (int i = 0; i < 10; ++i) w.Idled(microseconds(30), Ended::kPolling);
  w.Idled(microseconds(201), Ended::kCall);
  CHECK(w.window().count() == 0);
}

TEST_CASE("one miss among catches costs more than the catches earned", "[poll_window]") {
  PollWindow w(kMax);
  Slept(w, microseconds(100));
  for (int i = 0; i < 3; ++i) w.Idled(microseconds(30), Ended::kPolling);  // credit 4 (the cap)
  w.Idled(microseconds(120), Ended::kCall);                       // missed: -4
  Slept(w, microseconds(120), 4);  // 0 again, and the loop still sleeps at once
  Slept(w, microseconds(120));     // 1
  CHECK(w.window() == kMax);
}

TEST_CASE("work that comes just later than max is polled for once in nine spells",
          "[poll_window]") {
  // Each spell 120 µs as the loop sees it: within reach, but a poll of max never catches it.
  PollWindow w(kMax);
  int polled = 0;
  for (int i = 0; i < 100; ++i) {
    const bool polls = w.window().count() > 0;
    polled += polls;
    w.Idled(microseconds(120), Ended::kCall);
  }
  CHECK(polled == 11);  // the 2nd spell, then every 9th
}

}  // namespace
}  // namespace conclave
