// Terminal: a named, persistent worker slot (DESIGN §1). TerminalState is its lifecycle:
// idle ⇄ busy; busy → draining (closed while a run finishes) → closed; idle → closed;
// idle ⇄ offline (its profile is not loaded). A closed handle is never reissued. The names are
// the stored strings — never rename one. Every state change goes through MoveTerminal.
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace conclave::domain {

enum class TerminalState { kIdle, kBusy, kOffline, kDraining, kClosed };

std::string_view TerminalStateName(TerminalState s);
std::optional<TerminalState> ParseTerminalState(std::string_view name);

bool TerminalTransitionAllowed(TerminalState from, TerminalState to);
// Takes no new work: draining, closed or offline.
inline bool TerminalRefusesWork(TerminalState s) {
  return s == TerminalState::kDraining || s == TerminalState::kClosed ||
         s == TerminalState::kOffline;
}

struct Terminal {
  std::string handle;
  std::string profile;
  std::string cwd;
  TerminalState state = TerminalState::kIdle;
  int64_t active_dispatch = 0;
  int64_t created_ms = 0;
  // terminal create --exclusive: no two writer dispatches run at once in its directory
  // (through it or any other terminal sharing it).
  bool exclusive = false;
};

// Moves t to `to`; refuses an illegal move with FAILED_PRECONDITION (t unchanged). The
// active dispatch is set with busy/draining and cleared otherwise.
Status MoveTerminal(Terminal& t, TerminalState to, int64_t active_dispatch = 0);

// What a terminal becomes when its running dispatch ends: idle, or closed when draining.
TerminalState AfterRun(TerminalState s);

}  // namespace conclave::domain
