// Contract: see caller_identity.h.
#include "domain/caller_identity.h"

namespace conclave::domain {

CallerIdentity IdentityOf(const Caller& peer, const CallerIdentity& claimed) {
  if (peer.pid <= 0) {
    CallerIdentity c = claimed;
    c.source = "client";
    return c;
  }
  CallerIdentity c;
  c.uid = peer.uid;
  c.pid = peer.pid;
  c.exe = peer.exe;
  c.tty = peer.tty;
  c.source = "peer";
  return c;
}

}  // namespace conclave::domain
