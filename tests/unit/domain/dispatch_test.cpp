// Unit tests: the dispatch lifecycle (domain/dispatch).
#include <catch2/catch.hpp>

#include "domain/dispatch.h"

namespace conclave::domain {
namespace {

TEST_CASE("dispatch states keep their stored names", "[domain][dispatch]") {
  std::vector<std::string> names;
  for (DispatchState s : AllDispatchStates()) {
    names.emplace_back(DispatchStateName(s));
    CHECK(ParseDispatchState(DispatchStateName(s)) == s);
  }
  CHECK(names == std::vector<std::string>{"queued", "running", "succeeded", "failed", "timed_out",
                                          "cancelled", "interrupted"});
  CHECK_FALSE(ParseDispatchState("done").has_value());
}

TEST_CASE("dispatch transitions: queued starts or is dropped — an ended one never moves",
          "[domain][dispatch]") {
  using S = DispatchState;
  CHECK(DispatchTransitionAllowed(S::kQueued, S::kRunning));
  CHECK(DispatchTransitionAllowed(S::kQueued, S::kCancelled));
  CHECK(DispatchTransitionAllowed(S::kQueued, S::kFailed));
  CHECK_FALSE(DispatchTransitionAllowed(S::kQueued, S::kSucceeded));
  CHECK_FALSE(DispatchTransitionAllowed(S::kQueued, S::kInterrupted));
  for (S end : {S::kSucceeded, S::kFailed, S::kTimedOut, S::kCancelled, S::kInterrupted}) {
    CHECK(DispatchTransitionAllowed(S::kRunning, end));
    CHECK(DispatchEnded(end));
    for (S to : AllDispatchStates()) {
      if (to != end) CHECK_FALSE(DispatchTransitionAllowed(end, to));
    }
  }
  CHECK_FALSE(DispatchTransitionAllowed(S::kRunning, S::kQueued));
  Dispatch d;
  d.id = 5;
  d.state = S::kSucceeded;
  CHECK(MoveDispatch(d, S::kRunning).code() == Code::kFailedPrecondition);
  CHECK(d.state == S::kSucceeded);
}

}  // namespace
}  // namespace conclave::domain
