// Contract: see review_report.h.
#include "service/review_report.h"

#include <algorithm>
#include <map>

#include "domain/dispatch.h"
#include "domain/review_figures.h"

namespace conclave::service {

std::vector<ProfileFigures> ReviewReport::Profiles(int64_t since_ms) {
  std::map<std::string, ProfileFigures> profiles;
  for (const auto& p : report_.DispatchReliability(since_ms)) {
    profiles[p.profile] = {p.profile, p.family, p.invocations, p.clean, p.timed_out,
                           p.failed, p.malformed, p.cost_usd, 0};
  }
  for (const auto& [name, malformed] : report_.MalformedRounds(since_ms)) {
    auto& p = profiles[name];
    p.profile = name;
    p.malformed += malformed;
    // Those dispatches exited cleanly but answered garbage: not clean invocations.
    p.clean = std::max<int64_t>(0, p.clean - malformed);
  }
  std::vector<ProfileFigures> out;
  for (auto& [name, p] : profiles) {
    p.clean_rate = p.invocations ? static_cast<double>(p.clean) / p.invocations : 0.0;
    out.push_back(p);
  }
  return out;
}

ReportView ReviewReport::Build(int64_t since_ms) {
  ReportView view;
  view.profiles = Profiles(since_ms);
  std::vector<domain::ReviewFacts> facts;
  for (const auto& r : reviews_.List(100000, since_ms)) {
    if (r.status != domain::ReviewStatus::kDone) continue;
    facts.push_back({r, reviews_.Rounds(r.id)});
  }
  std::vector<domain::DispatchFigures> reviewer;
  for (const auto& p : report_.ReviewerDispatchReliability(since_ms)) {
    reviewer.push_back({p.profile, p.family, p.invocations, p.clean, p.timed_out, p.failed, p.cost_usd});
  }
  nlohmann::json out = domain::ReviewFigures(facts, reviewer);
  out["since_unix_ms"] = since_ms;
  out["profiles"] = nlohmann::json::array();
  using domain::DispatchState;
  for (const auto& p : view.profiles) {
    out["profiles"].push_back(
        {{"profile", p.profile}, {"family", p.family}, {"invocations", p.invocations},
         {"clean", p.clean}, {std::string(domain::DispatchStateName(DispatchState::kTimedOut)), p.timed_out},
         {std::string(domain::DispatchStateName(DispatchState::kFailed)), p.failed},
         {"malformed", p.malformed}, {"cost_usd", p.cost_usd},
         {"clean_rate", domain::Rate(p.clean, p.invocations, "finished dispatches")}});
  }
  for (const auto& [family, n] : out["unique_findings_per_family"].items()) {
    view.unique_findings_per_family[family] = n.get<int64_t>();
  }
  view.reviews = out["reviews"].get<int64_t>();
  for (const char* k : {"converged", "no_movement", "cap_reached"}) {
    view.terminations[k] = out[k].get<int64_t>();
  }
  view.json = std::move(out);
  return view;
}

}  // namespace conclave::service
