// GateService: decision gates — a coordinator-owned question that holds a task (or a review)
// until resolved. A gate holds its task blocked ("gate:<id>"); outcomes that arrive meanwhile
// wait in the task's resume status; resolving the last open gate releases the task. Resolving
// a gate over a review tells the ReviewGateListener (the sign-off) inside the same write.
// A worker that reported BLOCKED leaves its task blocked ("worker_blocked") with a question
// gate (AskForBlockedTask); resolving it appends the answer to the brief and re-queues the
// task on the target it last ran on (seed 001: "Blocked → ask").
// Loop thread only; writes run inside the commit batcher and answer after COMMIT.
#pragma once

#include <string>
#include <vector>

#include "domain/gate.h"
#include "service/core.h"
#include "service/dispatch_scheduler.h"
#include "service/ports.h"
#include "service/task_service.h"
#include "service/write_then.h"

namespace conclave::service {

class GateService {
 public:
  GateService(Core& core, TaskService& tasks) : core_(core), tasks_(tasks) {}
  void Connect(DispatchScheduler* scheduler, ReviewGateListener* reviews = nullptr) {
    scheduler_ = scheduler;
    reviews_ = reviews;
  }

  void ConnectFlows(FlowGateListener* flows) { flows_ = flows; }

  void Create(int64_t task_id, const std::string& question, const std::vector<std::string>& options,
              int64_t review_id, Done<domain::Gate> done);
  // caller: who resolved it (recorded as the sign-off of a review's gate); reason: why.
  void Resolve(int64_t id, const std::string& decision, const domain::CallerIdentity& caller,
               const std::string& reason, Done<domain::Gate> done);
  std::vector<domain::Gate> List(bool open_only, int64_t task_id);

  // Inside a write: creates a gate over a review (a stalemate's adjudication).
  domain::Gate InsertForReview(int64_t review_id, const std::string& question,
                               const std::string& options_json);
  // Inside a write: the worker of dispatch_id reported BLOCKED; t is already blocked
  // ("worker_blocked"). Opens a free-answer gate carrying its BLOCKERS and tells the
  // coordinator (decision_gate, high).
  domain::Gate AskForBlockedTask(const domain::Task& t, int64_t dispatch_id,
                                 const std::string& blockers);

 private:
  Core& core_;
  TaskService& tasks_;
  // Inside Resolve's write: the answer reaches the blocked task's brief; it is re-queued.
  void AnswerBlockedTask(domain::Task& t, const domain::Gate& g, const std::string& reason);

  DispatchScheduler* scheduler_ = nullptr;
  ReviewGateListener* reviews_ = nullptr;
  FlowGateListener* flows_ = nullptr;
};

}  // namespace conclave::service
