// Contract: see flow_reads.h.
#include "service/flow_reads.h"

#include <vector>

#include "domain/dispatch.h"
#include "domain/flow_figures.h"

namespace conclave::service {

FlowView ViewFlow(const domain::Flow& f, FlowReads& reads) {
  FlowView v;
  v.flow = f;
  if (f.review_id) {
    if (auto r = reads.reviews.Get(f.review_id)) {
      v.review_verdict = r->verdict;
      for (const auto& round : reads.reviews.Rounds(f.review_id)) v.cost_usd += round.cost_usd;
    }
  }
  v.merge_command = "git -C " + f.repo + " merge --ff-only " + f.branch;
  for (int round = 1; round <= f.round; ++round) {
    auto count = [&](const std::string& what, int* runs) {
      auto t = reads.tasks.GetByKey(domain::FlowTaskKey(f.id, round, what));
      if (!t) return;
      for (const auto& d : reads.dispatches.ForTask(t->id)) {
        *runs += 1;
        v.cost_usd += d.cost_usd;
        v.dispatches.push_back({{"round", round},
                                {"step", what},
                                {"task_id", t->id},
                                {"dispatch_id", d.id},
                                {"terminal", d.terminal},
                                {"state", std::string(domain::DispatchStateName(d.state))},
                                {"failure_kind", d.failure_kind},
                                {"exit_code", d.exit_code},
                                {"cost_usd", d.cost_usd}});
      }
    };
    count("implement", &v.implement_runs);
    int verifies = static_cast<int>(nlohmann::json::parse(f.verify, nullptr, false).size());
    for (int i = 0; i < verifies; ++i) count("verify" + std::to_string(i), &v.verify_runs);
  }
  return v;
}

nlohmann::json FlowFiguresSince(FlowReads& reads, int64_t since_ms) {
  std::vector<domain::FlowFacts> facts;
  for (const auto& f : reads.flows.List("", 100000)) {
    if (f.created_ms < since_ms) continue;
    FlowView v = ViewFlow(f, reads);
    domain::FlowFacts x;
    x.id = f.id;
    x.status = f.status;
    x.rounds = f.round;
    x.fix_rounds = f.fix_rounds;
    x.implement_runs = v.implement_runs;
    x.verify_runs = v.verify_runs;
    x.cost_usd = v.cost_usd;
    x.history = f.history;
    // First pass: every verify command of round 1 ran and passed.
    auto verify = nlohmann::json::parse(f.verify, nullptr, false);
    const int n = verify.is_array() ? static_cast<int>(verify.size()) : 0;
    // Round 1's commands in order: the first that did not pass decides (the later ones never
    // ran); all passed is a first pass. Not known while one of them is still to come.
    for (int i = 0; i < n; ++i) {
      auto t = reads.tasks.GetByKey(domain::FlowTaskKey(f.id, 1, "verify" + std::to_string(i)));
      if (!t || reads.dispatches.ForTask(t->id).empty()) break;
      if (t->status == domain::TaskState::kCompleted) {
        if (i == n - 1) x.first_pass_verify = true;
        continue;
      }
      if (t->status == domain::TaskState::kDispatched || t->status == domain::TaskState::kPending) {
        break;
      }
      x.first_pass_verify = false;
      break;
    }
    facts.push_back(std::move(x));
  }
  return domain::FlowFigures(facts);
}

}  // namespace conclave::service
