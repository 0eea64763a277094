#include "domain/terminal.h"

#include <array>

namespace conclave::domain {
namespace {

constexpr std::array<std::string_view, 5> kNames = {"idle", "busy", "offline", "draining",
                                                    "closed"};

}  // namespace

std::string_view TerminalStateName(TerminalState s) { return kNames[static_cast<size_t>(s)]; }

std::optional<TerminalState> ParseTerminalState(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<TerminalState>(i);
  }
  return std::nullopt;
}

bool TerminalTransitionAllowed(TerminalState from, TerminalState to) {
  using S = TerminalState;
  if (from == to) return from != S::kBusy;  // a busy terminal never takes a second run
  switch (from) {
    case S::kIdle:
      return to == S::kBusy || to == S::kOffline || to == S::kClosed;
    case S::kBusy:
      return to == S::kIdle || to == S::kDraining;
    case S::kOffline:
      return to == S::kIdle || to == S::kClosed;
    case S::kDraining:
      return to == S::kClosed;
    case S::kClosed:
      return false;
  }
  return false;
}

Status MoveTerminal(Terminal& t, TerminalState to, int64_t active_dispatch) {
  if (!TerminalTransitionAllowed(t.state, to)) {
    return FailedPrecondition("terminal '" + t.handle + "': cannot move from " +
                              std::string(TerminalStateName(t.state)) + " to " +
                              std::string(TerminalStateName(to)));
  }
  bool holds_run = to == TerminalState::kBusy || to == TerminalState::kDraining;
  t.state = to;
  t.active_dispatch = holds_run ? (active_dispatch ? active_dispatch : t.active_dispatch) : 0;
  return Status::Ok();
}

TerminalState AfterRun(TerminalState s) {
  return s == TerminalState::kDraining ? TerminalState::kClosed : TerminalState::kIdle;
}

}  // namespace conclave::domain
