// RunCompletion: what happens when a worker run ends — the named stops of a dispatch after
// supervise: load (a snapshot on the loop, then the facts on the helper pool: output parsed,
// contract, claims, cost) → classify (domain::ClassifyOutcome) → decide (domain::DecideNext)
// → apply (one write: the dispatch, its terminal, the task, a cooldown, a re-queue) → emit
// (the daemon's worker_done, escalations) — then the queue runs and listeners (reviews) hear
// of it after the commit. Any error while recording ends the dispatch as failed
// (internal_error) with an escalation and frees its terminal: nothing wedges.
// Loop thread only (facts are gathered on the helper pool).
#pragma once

#include <memory>
#include <cstdint>
#include <string>
#include <vector>

#include "domain/outcome.h"
#include "exec/run_types.h"
#include "service/completion_facts.h"
#include "service/core.h"
#include "service/dispatch_scheduler.h"
#include "service/gate_service.h"
#include "service/ports.h"
#include "service/task_service.h"
#include "service/terminal_service.h"

namespace conclave::service {

class RunCompletion {
 public:
  RunCompletion(Core& core, DispatchScheduler& scheduler, TaskService& tasks,
                TerminalService& terminals)
      : core_(core), scheduler_(scheduler), tasks_(tasks), terminals_(terminals) {}
  void AddListener(DispatchListener* l) { listeners_.push_back(l); }
  void Connect(TranscriptSink* transcripts) { transcripts_ = transcripts; }
  // Where a worker that reported BLOCKED asks its question (a decision gate).
  void Connect(GateService* gates) { gates_ = gates; }
  // Where an operational retry may go instead of its target (a flow's writer swap).
  void Connect(RetryTargets* swap) { swap_ = swap; }

  // The run of dispatch_id ended (or never started: outcome.stop == kSpawnFailed). `recorded`
  // (may be empty) is called on the loop once the outcome's write was made (or was not needed).
  // `launch`: the run's pid, start time and start head when the store does not have them yet;
  // they are written with the outcome (and the start head judges a writer's claims).
  // `dirty_at_start`: a fresh writer's files that were dirty when it started (may be null).
  void OnRunFinished(int64_t dispatch_id, const exec::RunOutcome& outcome, double probed_cost,
                     std::function<void()> recorded, std::optional<LaunchRecord> launch,
                     std::shared_ptr<const exec::DirtyFiles> dirty_at_start = nullptr);

  // Number of completions between the run's end and their recording (shutdown waits for 0).
  int pending() const { return pending_; }

 private:
  void Record(int64_t dispatch_id, const exec::RunOutcome& outcome,
              std::shared_ptr<const CompletionFacts> facts,
              const std::optional<LaunchRecord>& launch);
  Status Apply(domain::Dispatch& d, domain::Task& t, const CompletionFacts& facts,
               const domain::Classification& c, std::vector<int64_t>* to_start);
  void ApplyToDispatch(domain::Dispatch& d, const domain::Task& t, const CompletionFacts& facts,
                       const domain::Classification& c);
  domain::NextStep Decide(const domain::Dispatch& d, const domain::Task& t,
                          const CompletionFacts& facts, const domain::Classification& c);
  Status ApplyToTask(domain::Dispatch& d, domain::Task& t, const domain::NextStep& next);
  void EmitOutcome(const domain::Dispatch& d, const domain::Task& t, const CompletionFacts& facts,
                   const domain::NextStep& next);
  void EmitBreakerOpen(const domain::Dispatch& d, const domain::Task& t,
                       const domain::NextStep& next);
  // The recording write failed: end the dispatch as internal_error in a write of its own.
  void FailInternally(int64_t dispatch_id, const std::string& error);
  void AfterRecorded(const std::vector<int64_t>& to_start, std::optional<domain::Dispatch> done,
                     std::string task_role, std::function<void()> retry);

  Core& core_;
  DispatchScheduler& scheduler_;
  TaskService& tasks_;
  TerminalService& terminals_;
  std::vector<DispatchListener*> listeners_;
  TranscriptSink* transcripts_ = nullptr;
  GateService* gates_ = nullptr;
  RetryTargets* swap_ = nullptr;
  int pending_ = 0;
};

}  // namespace conclave::service
