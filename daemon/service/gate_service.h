// GateService: decision gates — a coordinator-owned question that holds a task (or a review)
// until resolved. A gate holds its task blocked ("gate:<id>"); outcomes that arrive meanwhile
// wait in the task's resume status; resolving the last open gate releases the task. Resolving
// a gate over a review tells the ReviewGateListener (the sign-off) inside the same write.
// Loop thread only; writes run inside the commit batcher and answer after COMMIT.
#pragma once

#include <string>
#include <vector>

#include "domain/gate.h"
#include "service/core.h"
#include "service/ports.h"
#include "service/task_service.h"
#include "service/write_then.h"

namespace conclave::service {

class GateService {
 public:
  GateService(Core& core, TaskService& tasks) : core_(core), tasks_(tasks) {}
  void Connect(QueuePump* pump, ReviewGateListener* reviews = nullptr) {
    pump_ = pump;
    reviews_ = reviews;
  }

  void Create(int64_t task_id, const std::string& question, const std::vector<std::string>& options,
              int64_t review_id, Done<domain::Gate> done);
  // caller: who resolved it (recorded as the sign-off of a review's gate); reason: why.
  void Resolve(int64_t id, const std::string& decision, const domain::CallerIdentity& caller,
               const std::string& reason, Done<domain::Gate> done);
  std::vector<domain::Gate> List(bool open_only, int64_t task_id);

  // Inside a write: creates a gate over a review (a stalemate's adjudication).
  domain::Gate InsertForReview(int64_t review_id, const std::string& question,
                               const std::string& options_json);

 private:
  Core& core_;
  TaskService& tasks_;
  QueuePump* pump_ = nullptr;
  ReviewGateListener* reviews_ = nullptr;
};

}  // namespace conclave::service
