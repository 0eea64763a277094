// WorkerReports: a worker's own messages (worker_done, heartbeat, status, question,
// escalation) are bound to its dispatch by the token the daemon put in its environment. A
// wrong or stale token is refused with PERMISSION_DENIED and recorded as an escalation; a
// worker_done is accepted once per dispatch. Loop thread only.
#pragma once

#include <string>

#include "service/core.h"
#include "service/ports.h"

namespace conclave::service {

class WorkerReports : public WorkerReportCheck {
 public:
  explicit WorkerReports(Core& core) : core_(core) {}
  // Inside a write: binds m to its dispatch (task id, sender, recipient) or refuses it.
  Status CheckWorkerReport(domain::MessageRecord& m, const std::string& token) override;

 private:
  Status Refuse(const domain::MessageRecord& m, const std::string& why);
  Core& core_;
};

}  // namespace conclave::service
