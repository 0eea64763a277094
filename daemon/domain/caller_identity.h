// CallerIdentity: who made a decision — uid, pid, executable and terminal — as recorded with a
// review's sign-off. IdentityOf prefers the kernel's view of the peer (a unix-socket caller:
// SO_PEERCRED uid and pid, its executable and the terminal on its stdin read by the daemon at
// accept); only when the daemon cannot know the peer (a loopback TCP caller, admitted by its
// bearer token) does it fall back to what the client states. `source` says which it was.
// Pure.
#pragma once

#include <cstdint>
#include <string>

#include "domain/caller.h"

namespace conclave::domain {

struct CallerIdentity {
  int64_t uid = -1;  // -1 = not known
  int64_t pid = 0;
  std::string exe;
  std::string tty;  // "" when the caller's stdin is not a terminal
  std::string source = "client";  // "peer" (the kernel's view) | "client" (the client's claim)
  // A decision counts as a human's only when it came from a terminal — as the kernel shows
  // the caller: a terminal a client merely claims (a loopback TCP caller) is not enough.
  bool FromTerminal() const { return !tty.empty() && source == "peer"; }
};

// The kernel's view of `peer` when the daemon has one (pid > 0), else `claimed`.
CallerIdentity IdentityOf(const Caller& peer, const CallerIdentity& claimed);

}  // namespace conclave::domain
