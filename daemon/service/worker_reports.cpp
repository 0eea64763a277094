#include "service/worker_reports.h"
#include "common/loop_kick.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "common/hash.h"

namespace conclave::service {
namespace {
bool SameToken(const std::string& a, const std::string& b) {
  if (a.empty() || a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}
}  // namespace

Status WorkerReports::Refuse(const domain::MessageRecord& m, const std::string& why) {
  int64_t did = m.dispatch_id;
  std::string from = m.from;
  // Record the refusal in its own write (the current one is about to roll back).
  PostToLoop(core_.io, [this, did, from, why] {
    Status s = core_.batcher.Write([&]() -> Status {
      auto cur = did ? core_.dispatches.Get(did) : std::nullopt;
      core_.Notify({cur ? cur->coordinator : "coordinator", "escalation", "normal",
                    cur ? cur->task_id : 0, did, "refused worker report from " + from, why, ""});
      return Status::Ok();
    });
    (void)s;
  });
  spdlog::warn("refused worker report for dispatch {}: {}", did, why);
  return PermissionDenied("dispatch_token: " + why);
}

Status WorkerReports::CheckWorkerReport(domain::MessageRecord& m, const std::string& token) {
  auto d = m.dispatch_id ? core_.dispatches.Get(m.dispatch_id) : std::nullopt;
  if (!d) return Refuse(m, "dispatch " + std::to_string(m.dispatch_id) + " does not exist");
  if (token.empty() || !SameToken(Sha256Hex(token), d->token)) {
    return Refuse(m, "wrong token for dispatch " + std::to_string(d->id));
  }
  if (d->state != domain::DispatchState::kRunning) {
    return Refuse(m, "dispatch " + std::to_string(d->id) + " is " +
                         std::string(domain::DispatchStateName(d->state)) + " (stale token)");
  }
  if (m.type == "worker_done") {
    if (d->worker_done) {
      return Refuse(m, "dispatch " + std::to_string(d->id) + " already reported worker_done");
    }
    d->worker_done = true;
    core_.dispatches.Update(*d);
  }
  m.task_id = d->task_id;
  m.from = d->terminal;  // a worker's report always carries its own terminal as sender
  if (m.to.empty() || m.type == "worker_done") m.to = d->coordinator;
  return Status::Ok();
}

}  // namespace conclave::service
