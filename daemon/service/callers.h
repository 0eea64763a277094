// Callers: who is calling, from the kernel's word, and whether they may. The api layer reads a
// connection's peer credentials (SO_PEERCRED) when it accepts it and asks InspectUnixPeer for
// the peer's ancestry right then (a pid read later could be recycled); on the loop, Resolve
// turns that into a Caller — the coordinator (same uid, not a descendant), a worker (a
// descendant of the daemon inside one running dispatch's process tree), an unbound worker (a
// descendant whose dispatch cannot be told) or a foreign uid. Admit applies domain::MayCall
// and turns each refusal into one escalation per dispatch and RPC, with a count of tries.
// Thread-safety: InspectUnixPeer is thread-safe; the rest runs on the loop.
#pragma once

#include <unistd.h>

#include <map>
#include <string>
#include <utility>

#include "domain/caller.h"
#include "exec/proc_info.h"
#include "service/core.h"
#include "service/ports.h"
#include "service/run_supervisor.h"

namespace conclave::service {

struct PeerInfo {
  bool tcp = false;       // a loopback TCP caller (authenticated by the bearer token)
  uint32_t uid = 0;
  int32_t pid = 0;
  exec::Ancestry ancestry;  // from the peer up to the daemon, read at accept time
  std::string exe, tty;     // its executable and the terminal on its stdin, read at accept
  // Connected through this dispatch's own socket (DispatchSockets): that dispatch's worker,
  // whatever its ancestry says.
  int64_t via_dispatch = 0;
};

// Reads the ancestry of a unix-socket peer (pid and uid from SO_PEERCRED).
PeerInfo InspectUnixPeer(uint32_t uid, int32_t pid);

class Callers : public RefusalLog {
 public:
  Callers(Core& core, RunSupervisor& runs) : core_(core), runs_(runs) {}

  domain::Caller Resolve(const PeerInfo& peer);
  // OK when caller may call rpc at all (kOwnOnly is then enforced by the service); otherwise
  // PERMISSION_DENIED (or UNAUTHENTICATED for a foreign uid) and an escalation.
  Status Admit(const domain::Caller& caller, domain::Rpc rpc);
  // A worker asked for something outside its own dispatch/handle/task: refused and escalated.
  Status Refuse(const domain::Caller& caller, domain::Rpc rpc, const std::string& why) override;
  // How often a dispatch's worker was refused, per RPC (for its worker_done).
  std::map<std::string, int> RefusalsOf(int64_t dispatch_id) const;

 private:
  Core& core_;
  RunSupervisor& runs_;
  const uid_t self_uid_ = geteuid();  // the daemon's; read once, not per request
  std::map<std::pair<int64_t, domain::Rpc>, int> refusals_;
};

}  // namespace conclave::service
