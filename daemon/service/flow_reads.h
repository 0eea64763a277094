// What a flow's view and the report's flow figures read, over any connection's stores: the
// loop's (FlowService) or SnapshotReader's (the report, built off the loop). Pure reads.
// Thread-safety: the thread that owns the stores' connection.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "domain/flow.h"
#include "store/dispatch_store.h"
#include "store/flow_store.h"
#include "store/review_store.h"
#include "store/task_store.h"

namespace conclave::service {

struct FlowView {
  domain::Flow flow;
  std::string review_verdict;  // the last verdict ("" while none)
  std::string merge_command;   // how a person merges the branch
  int implement_runs = 0, verify_runs = 0;
  double cost_usd = 0;
  // Every dispatch of its steps: [{round, step, task_id, dispatch_id, terminal, state,
  // failure_kind, exit_code, cost_usd}], in order.
  nlohmann::json dispatches = nlohmann::json::array();
};

struct FlowReads {
  store::FlowStore& flows;
  store::TaskStore& tasks;
  store::DispatchStore& dispatches;
  store::ReviewStore& reviews;
};

// The flow with its review's verdict, its steps' dispatches and what they and its review cost.
FlowView ViewFlow(const domain::Flow& f, FlowReads& reads);

// `report`'s per-flow figures for flows started at or after since_ms (domain/flow_figures).
nlohmann::json FlowFiguresSince(FlowReads& reads, int64_t since_ms);

}  // namespace conclave::service
