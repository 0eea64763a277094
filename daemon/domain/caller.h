// CallerIdentity: who made a request — uid, pid, executable and controlling terminal. Today
// the client states it (the CLI sends its own getuid/getpid, /proc/self/exe and ttyname(0));
// the daemon keeps it in this one struct so that the kernel's view of the peer (SO_PEERCRED,
// /proc/<pid>/exe) can replace the client's claim without touching its users. `source` says
// which it was. Plain record. Pure.
#pragma once

#include <cstdint>
#include <string>

namespace conclave::domain {

struct CallerIdentity {
  int64_t uid = -1;  // -1 = not stated
  int64_t pid = 0;
  std::string exe;
  std::string tty;  // "" when the caller's stdin is not a terminal
  std::string source = "client";  // "client" (claimed by the client) | "peer" (kernel)
  // A decision counts as a human's only when it came from a terminal.
  bool FromTerminal() const { return !tty.empty(); }
};

}  // namespace conclave::domain
