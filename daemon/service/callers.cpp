#include "service/callers.h"

#include <unistd.h>

#include <spdlog/spdlog.h>

namespace conclave::service {
using domain::Caller;
using domain::CallerRole;

PeerInfo InspectUnixPeer(uint32_t uid, int32_t pid) {
  PeerInfo p;
  p.uid = uid;
  p.pid = pid;
  p.ancestry = exec::ReadAncestry(pid, getpid());
  p.exe = exec::ReadProcExe(pid);
  p.tty = exec::ReadProcStdinTty(pid);
  return p;
}

Caller Callers::Resolve(const PeerInfo& peer) {
  Caller c;
  c.uid = peer.uid;
  c.pid = peer.pid;
  c.exe = peer.exe;
  c.tty = peer.tty;
  if (peer.tcp) return c;  // admitted by its bearer token: the coordinator
  if (peer.uid != self_uid_) {
    c.role = CallerRole::kForeign;
    return c;
  }
  if (peer.via_dispatch > 0) {
    // Only a worker is ever given this socket: it speaks for its dispatch while that runs,
    // and for nothing once it ended.
    c.role = CallerRole::kUnboundWorker;
    auto d = core_.dispatches.Get(peer.via_dispatch);
    if (d && d->state == domain::DispatchState::kRunning) {
      c.role = CallerRole::kWorker;
      c.dispatch_id = d->id;
      c.task_id = d->task_id;
      c.terminal = d->terminal;
    }
    return c;
  }
  // Not known to be outside the daemon's tree (a chain too deep to walk, a link gone or
  // unreadable): fail closed, as a worker's process bound to no dispatch.
  if (!peer.ancestry.descends && peer.ancestry.complete) return c;
  c.role = CallerRole::kUnboundWorker;
  if (auto d = runs_.DispatchOf(peer.ancestry.chain)) {
    c.role = CallerRole::kWorker;
    c.dispatch_id = d->id;
    c.task_id = d->task_id;
    c.terminal = d->terminal;
  }
  return c;
}

Status Callers::Refuse(const Caller& caller, domain::Rpc rpc, const std::string& why) {
  std::string name(domain::RpcName(rpc));
  int tries = ++refusals_[{caller.dispatch_id, rpc}];
  spdlog::warn("refused {} from {} (pid {}, dispatch {}): {}", name,
               domain::CallerRoleName(caller.role), caller.pid, caller.dispatch_id, why);
  if (tries == 1) {
    // One escalation per dispatch and RPC; later tries are counted (see RefusalsOf).
    int64_t did = caller.dispatch_id;
    std::string who = caller.terminal.empty() ? "pid " + std::to_string(caller.pid) : caller.terminal;
    Status s = core_.batcher.Write([&]() -> Status {
      auto d = did ? core_.dispatches.Get(did) : std::nullopt;
      core_.Notify({d ? d->coordinator : "coordinator", "escalation", "high", d ? d->task_id : 0, did,
                    "refused " + name + " from worker " + who,
                    "a worker tried to call " + name + ": " + why +
                        ". Workers may only report on their own dispatch.",
                    nlohmann::json({{"rpc", name}, {"worker", who}, {"pid", caller.pid},
                                    {"dispatch_id", did}, {"tries", tries}})
                        .dump()});
      return Status::Ok();
    });
    (void)s;
  }
  return PermissionDenied(name + ": " + why);
}

Status Callers::Admit(const Caller& caller, domain::Rpc rpc) {
  switch (domain::MayCall(caller.role, rpc)) {
    case domain::Permission::kAllow:
    case domain::Permission::kOwnOnly:
      return Status::Ok();
    case domain::Permission::kDeny:
      break;
  }
  if (caller.role == CallerRole::kForeign) {
    return Status(Code::kUnauthenticated, "uid " + std::to_string(caller.uid) +
                                              " is not the daemon's user; only it may call");
  }
  std::string what = caller.role == CallerRole::kUnboundWorker
                         ? "a process started by a worker may only send a report with its "
                           "dispatch token"
                         : "a worker may not call " + std::string(domain::RpcName(rpc)) +
                               " — only the coordinator may";
  return Refuse(caller, rpc, what);
}

std::map<std::string, int> Callers::RefusalsOf(int64_t dispatch_id) const {
  std::map<std::string, int> out;
  for (const auto& [key, n] : refusals_) {
    if (key.first == dispatch_id) out[std::string(domain::RpcName(key.second))] = n;
  }
  return out;
}

}  // namespace conclave::service
