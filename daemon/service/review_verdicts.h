// ReviewVerdicts: the end of a review revision and what a person decides about it. Finalize
// records the verdict with the reconciled findings, tells the coordinator (an escalation when
// it needs a person) and, for an adversarial-stalemate or gate-absent verdict, opens a
// decision gate over the review (never "trust the primary", never a silent pass). Resolving
// that gate records a sign-off with the caller's identity (domain/signoff.h): a human's
// accept-risk makes the verdict APPROVED_BY_SIGNOFF, anything else leaves it as it was.
// After the commit the review's round directories are removed and waiters are woken.
// Loop thread only; Finalize and OnReviewGateResolved run inside a write.
#pragma once

#include <string>
#include <vector>

#include "domain/reconcile.h"
#include "domain/review_record.h"
#include "service/core.h"
#include "service/gate_service.h"
#include "service/ports.h"
#include "service/review_workspace.h"
#include "store/review_store.h"

namespace conclave::service {

// Told when a review reached its verdict (after the commit).
class ReviewFinished {
 public:
  virtual ~ReviewFinished() = default;
  virtual void OnReviewFinished(int64_t review_id) = 0;
};

class ReviewVerdicts : public ReviewGateListener {
 public:
  ReviewVerdicts(Core& core, store::ReviewStore& store, GateService& gates,
                 ReviewWorkspace& workspace)
      : core_(core), store_(store), gates_(gates), workspace_(workspace) {}
  void Connect(ReviewFinished* finished) { finished_ = finished; }

  // Inside a write: records the verdict of r's current revision.
  void Finalize(domain::Review& r, const std::string& verdict, const std::string& termination,
                const std::string& reason, const std::vector<domain::ReconciledFinding>& findings,
                bool escalate);

  Status OnReviewGateResolved(const domain::Gate& g, const domain::CallerIdentity& caller,
                              const std::string& reason) override;

  // Inside a write: a message from the daemon to the review's coordinator.
  void Tell(const domain::Review& r, const std::string& type, const std::string& priority,
            const std::string& subject, const std::string& body, const nlohmann::json& payload);

 private:
  void OpenGate(domain::Review& r, const std::string& question, const char* options);

  Core& core_;
  store::ReviewStore& store_;
  GateService& gates_;
  ReviewWorkspace& workspace_;
  ReviewFinished* finished_ = nullptr;
};

}  // namespace conclave::service
