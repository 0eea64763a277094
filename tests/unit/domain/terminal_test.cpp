// Unit tests: the terminal lifecycle (domain/terminal).
#include <catch2/catch.hpp>

#include "domain/terminal.h"

namespace conclave::domain {
namespace {

TEST_CASE("terminal transitions", "[domain][terminal]") {
  using S = TerminalState;
  CHECK(TerminalTransitionAllowed(S::kIdle, S::kBusy));
  CHECK(TerminalTransitionAllowed(S::kBusy, S::kIdle));
  CHECK(TerminalTransitionAllowed(S::kBusy, S::kDraining));
  CHECK(TerminalTransitionAllowed(S::kDraining, S::kClosed));
  CHECK(TerminalTransitionAllowed(S::kIdle, S::kOffline));
  CHECK(TerminalTransitionAllowed(S::kOffline, S::kIdle));
  CHECK_FALSE(TerminalTransitionAllowed(S::kBusy, S::kBusy));  // never two runs at once
  CHECK_FALSE(TerminalTransitionAllowed(S::kBusy, S::kClosed));
  CHECK_FALSE(TerminalTransitionAllowed(S::kDraining, S::kBusy));
  for (S to : {S::kIdle, S::kBusy, S::kOffline, S::kDraining}) {
    CHECK_FALSE(TerminalTransitionAllowed(S::kClosed, to));  // handles are never reissued
  }
  CHECK(AfterRun(S::kBusy) == S::kIdle);
  CHECK(AfterRun(S::kDraining) == S::kClosed);
  CHECK(TerminalRefusesWork(S::kDraining));
  CHECK_FALSE(TerminalRefusesWork(S::kBusy));
}

TEST_CASE("MoveTerminal keeps the active dispatch only while it holds a run", "[domain][terminal]") {
  Terminal t{"t1", "p", "/w", TerminalState::kIdle, 0, 0};
  REQUIRE(MoveTerminal(t, TerminalState::kBusy, 42).ok());
  CHECK(t.active_dispatch == 42);
  REQUIRE(MoveTerminal(t, TerminalState::kDraining).ok());
  CHECK(t.active_dispatch == 42);
  REQUIRE(MoveTerminal(t, TerminalState::kClosed).ok());
  CHECK(t.active_dispatch == 0);
  Status s = MoveTerminal(t, TerminalState::kIdle);
  CHECK(s.code() == Code::kFailedPrecondition);
  CHECK(s.message().find("'t1'") != std::string::npos);
}

TEST_CASE("terminal state names round-trip", "[domain][terminal]") {
  for (auto s : {TerminalState::kIdle, TerminalState::kBusy, TerminalState::kOffline,
                 TerminalState::kDraining, TerminalState::kClosed}) {
    CHECK(ParseTerminalState(TerminalStateName(s)) == s);
  }
  CHECK(TerminalStateName(TerminalState::kDraining) == "draining");
}

}  // namespace
}  // namespace conclave::domain
