#include "domain/dispatch.h"

#include <array>

namespace conclave::domain {
namespace {

constexpr std::array<std::string_view, 7> kNames = {
    "queued", "running", "succeeded", "failed", "timed_out", "cancelled", "interrupted"};

}  // namespace

std::string_view DispatchStateName(DispatchState s) { return kNames[static_cast<size_t>(s)]; }

std::optional<DispatchState> ParseDispatchState(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<DispatchState>(i);
  }
  return std::nullopt;
}

const std::vector<DispatchState>& AllDispatchStates() {
  static const std::vector<DispatchState> all = {
      DispatchState::kQueued,   DispatchState::kRunning,   DispatchState::kSucceeded,
      DispatchState::kFailed,   DispatchState::kTimedOut,  DispatchState::kCancelled,
      DispatchState::kInterrupted};
  return all;
}

bool DispatchEnded(DispatchState s) {
  return s != DispatchState::kQueued && s != DispatchState::kRunning;
}

bool DispatchTransitionAllowed(DispatchState from, DispatchState to) {
  using S = DispatchState;
  if (from == to) return true;
  switch (from) {
    case S::kQueued:
      // Started, dropped from the queue, or refused (budget) before it ran.
      return to == S::kRunning || to == S::kCancelled || to == S::kFailed;
    case S::kRunning:
      return DispatchEnded(to);
    default:
      return false;  // an ended dispatch never changes again
  }
}

Status MoveDispatch(Dispatch& d, DispatchState to) {
  if (!DispatchTransitionAllowed(d.state, to)) {
    return FailedPrecondition("dispatch " + std::to_string(d.id) + ": cannot move from " +
                              std::string(DispatchStateName(d.state)) + " to " +
                              std::string(DispatchStateName(to)));
  }
  d.state = to;
  return Status::Ok();
}

}  // namespace conclave::domain
