#include "service/review_report.h"

#include <algorithm>
#include <map>

#include "domain/findings.h"
#include "domain/reconcile.h"

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
  nlohmann::json out;
  out["profiles"] = nlohmann::json::array();
  using domain::DispatchState;
  for (const auto& p : view.profiles) {
    out["profiles"].push_back(
        {{"profile", p.profile}, {"family", p.family}, {"invocations", p.invocations},
         {"clean", p.clean}, {std::string(domain::DispatchStateName(DispatchState::kTimedOut)), p.timed_out},
         {std::string(domain::DispatchStateName(DispatchState::kFailed)), p.failed},
         {"malformed", p.malformed}, {"cost_usd", p.cost_usd}, {"clean_rate", p.clean_rate}});
  }
  // Incremental value: unique findings per family by the materially-different rubric.
  std::map<std::string, int64_t> unique;
  std::map<std::string, int64_t> terminations;
  int64_t reviews = 0;
  for (const auto& r : reviews_.List(100000, since_ms)) {
    if (r.status != domain::ReviewStatus::kDone) continue;
    ++reviews;
    if (!r.termination.empty()) terminations[r.termination]++;
    auto findings = nlohmann::json::parse(r.findings, nullptr, false);
    if (!findings.is_array()) continue;
    std::vector<domain::ReconciledFinding> rf;
    for (const auto& f : findings) {
      auto parsed = domain::ParseFindingsJson({{"findings", {f}}});
      if (!parsed.ok || parsed.findings.empty()) continue;
      domain::ReconciledFinding x;
      x.finding = parsed.findings[0];
      x.family = f.value("family", "");
      x.from_foreign = f.value("foreign", false);
      x.disposition = f.value("disposition", "");
      x.open = f.value("open", true);
      rf.push_back(std::move(x));
    }
    for (const auto& [family, n] : domain::UniqueFindingsPerFamily(rf)) unique[family] += n;
  }
  out["unique_findings_per_family"] = unique;
  out["reviews"] = reviews;
  out["terminations"] = terminations;
  auto rate = [&](const char* k) {
    return reviews ? static_cast<double>(terminations[k]) / static_cast<double>(reviews) : 0.0;
  };
  for (const char* k : {"converged", "no_movement", "cap_reached"}) out[k] = terminations[k];
  out["convergence_rate"] = rate("converged");
  out["no_movement_rate"] = rate("no_movement");
  out["cap_reached_rate"] = rate("cap_reached");
  view.unique_findings_per_family = unique;
  view.reviews = reviews;
  view.terminations = terminations;
  view.json = std::move(out);
  return view;
}

}  // namespace conclave::service
