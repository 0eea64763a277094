// Contract: see review_figures.h.
#include "domain/review_figures.h"

#include <algorithm>
#include <map>

#include "domain/carry_over.h"
#include "domain/family.h"
#include "domain/findings.h"
#include "domain/reconcile.h"

namespace conclave::domain {
namespace {

using nlohmann::json;

struct Sides {
  int64_t foreign_only = 0, same_source_only = 0, both = 0;
};

struct ReliabilityRow {
  std::string family;
  int64_t rounds = 0, malformed = 0, gate_absent = 0;
  DispatchFigures dispatches;
};

// Open entries no other family covered, per family and severity.
std::map<std::string, std::map<std::string, int64_t>> Unique(
    const std::vector<ReconciledFinding>& findings) {
  std::map<std::string, std::map<std::string, int64_t>> out;
  for (const ReconciledFinding& e : findings) {
    if (!e.open || e.disposition == kAdoptedBoth) continue;
    bool covered = false;
    for (const ReconciledFinding& other : findings) {
      covered = covered || (other.open && !SameFamily(other.family, e.family) &&
                            Overlaps(e.finding, other.finding));
    }
    if (!covered) out[e.family][std::string(SeverityName(e.finding.severity))]++;
  }
  return out;
}

// Same-source (primary) against foreign (challenger) side, over open entries. A debate thread
// both sides held is one entry; a measured pair is two entries (one per line): it counts once,
// from the foreign side.
Sides SidesOf(const std::vector<ReconciledFinding>& findings, bool measured) {
  Sides s;
  for (const ReconciledFinding& e : findings) {
    if (!e.open) continue;
    if (e.disposition == kAdoptedBoth) {
      if (!measured || e.role == "challenger") s.both++;
    } else if (e.role == "challenger") {
      s.foreign_only++;
    } else if (e.role == "primary") {
      s.same_source_only++;
    }
  }
  return s;
}

bool OnlyAgreed(const ReviewRound& round) {
  auto j = json::parse(round.findings, nullptr, false);
  if (!j.is_array() || j.empty()) return false;
  for (const auto& f : j) {
    std::string stance = f.is_object() ? f.value("stance", "") : "";
    if (stance != "agree" && stance != "still_present") return false;
  }
  return true;
}

json Counts(const std::map<std::string, std::map<std::string, int64_t>>& by_family) {
  json out = json::object();
  for (const auto& [family, by_severity] : by_family) {
    int64_t total = 0;
    json f = json::object();
    for (const auto& [severity, n] : by_severity) {
      f[severity] = n;
      total += n;
    }
    f["total"] = total;
    out[family] = f;
  }
  return out;
}

}  // namespace

std::string ExclusionOf(const Review& r) {
  if (r.mode == "mechanical") return "mechanical: no reviewer ran";
  if (!r.blocked_by.empty()) return "blocked before any reviewer ran (" + r.blocked_by + ")";
  if (r.termination == "reviewer_missing" || r.termination == "no_foreign_reviewer" ||
      r.verdict == VerdictName(Verdict::kGateAbsent)) {
    return "gate-absent: a reviewer was missing, crashed, timed out or answered garbage";
  }
  return "";
}

json Rate(int64_t numerator, int64_t denominator, const std::string& of) {
  json value = denominator > 0 ? json(static_cast<double>(numerator) / static_cast<double>(denominator))
                               : json(nullptr);
  return {{"value", value}, {"numerator", numerator}, {"denominator", denominator}, {"of", of}};
}

json ReviewFigures(const std::vector<ReviewFacts>& reviews,
                   const std::vector<DispatchFigures>& reviewer_dispatches) {
  json per_review = json::array();
  std::map<std::string, std::map<std::string, int64_t>> unique;
  Sides sides, measured_sides;
  int64_t counted = 0, sided = 0, measured = 0, debates = 0, challenger_rounds = 0, stamps = 0;
  std::map<std::string, int64_t> terminations = {{"converged", 0}, {"no_movement", 0}, {"cap_reached", 0}};
  std::vector<int64_t> to_convergence;
  std::map<std::string, int64_t> excluded;
  std::map<std::string, ReliabilityRow> reliability;
  double cost = 0, counted_cost = 0;
  for (const ReviewFacts& facts : reviews) {
    const Review& r = facts.review;
    double review_cost = 0;
    int64_t review_challengers = 0, review_stamps = 0, final_rounds = 0;
    for (const ReviewRound& x : facts.rounds) {
      review_cost += x.cost_usd;
      ReliabilityRow& row = reliability[x.profile];
      row.family = x.family;
      row.rounds++;
      row.malformed += x.malformed;
      if (x.state == RoundState::kFailed || x.state == RoundState::kMalformed) row.gate_absent++;
      if (x.revision == r.revision) final_rounds++;
      if (x.role == "challenger" && x.state == RoundState::kDone && !r.measure) {
        review_challengers++;
        if (OnlyAgreed(x)) review_stamps++;
      }
    }
    cost += review_cost;
    const std::string exclusion = ExclusionOf(r);
    const auto findings = ReconciledListFromText(r.findings);
    json entry = {{"id", r.id},           {"mode", r.mode},
                  {"measure", r.measure}, {"verdict", r.verdict},
                  {"termination", r.termination}, {"revision", r.revision},
                  {"rounds", facts.rounds.size()}, {"cost_usd", review_cost},
                  {"counted", exclusion.empty()}};
    if (!exclusion.empty()) {
      entry["excluded_because"] = exclusion;
      excluded[exclusion.substr(0, exclusion.find(':'))]++;
      per_review.push_back(entry);
      continue;
    }
    counted++;
    counted_cost += review_cost;
    auto review_unique = Unique(findings);
    for (const auto& [family, by_severity] : review_unique) {
      for (const auto& [severity, n] : by_severity) unique[family][severity] += n;
    }
    entry["unique_findings"] = Counts(review_unique);
    const bool debate = r.mode == "debate" && !r.measure;
    const bool has_sides = r.measure || (debate && review_challengers > 0);
    if (has_sides) {
      Sides s = SidesOf(findings, r.measure);
      sided++;
      sides.foreign_only += s.foreign_only;
      sides.same_source_only += s.same_source_only;
      sides.both += s.both;
      if (r.measure) {
        measured++;
        measured_sides.foreign_only += s.foreign_only;
        measured_sides.same_source_only += s.same_source_only;
        measured_sides.both += s.both;
      }
      entry["foreign_only"] = s.foreign_only;
      entry["same_source_only"] = s.same_source_only;
      entry["both"] = s.both;
    }
    if (debate) {
      debates++;
      if (terminations.count(r.termination)) terminations[r.termination]++;
      challenger_rounds += review_challengers;
      stamps += review_stamps;
      entry["challenger_rounds"] = review_challengers;
      entry["rubber_stamp_rounds"] = review_stamps;
      if (r.termination == "converged") {
        to_convergence.push_back(final_rounds);
        entry["rounds_to_convergence"] = final_rounds;
      }
    }
    per_review.push_back(entry);
  }
  json out;
  out["reviews"] = reviews.size();
  out["reviews_counted"] = counted;
  out["reviews_excluded"] = excluded;
  out["per_review"] = per_review;
  out["unique_findings"] = {
      {"by_family", Counts(unique)},
      {"of", "open findings of counted reviews that no other family covered"}};
  json flat = json::object();
  for (const auto& [family, counts] : out["unique_findings"]["by_family"].items()) {
    flat[family] = counts["total"];
  }
  out["unique_findings_per_family"] = flat;
  auto side_json = [](const Sides& s, int64_t n, const std::string& of) {
    return json{{"foreign_only", s.foreign_only},
                {"same_source_only", s.same_source_only},
                {"both", s.both},
                {"reviews", n},
                {"foreign_only_per_review", Rate(s.foreign_only, n, of)}};
  };
  out["incremental_value"] = side_json(sides, sided, "counted reviews with a same-source and a foreign side");
  out["incremental_value"]["measured"] =
      side_json(measured_sides, measured, "counted --measure reviews (independent sides)");
  json rates = json::object();
  for (const auto& [name, n] : terminations) {
    out[name] = n;
    rates[name] = Rate(n, debates, "counted debates");
  }
  json convergence = {{"count", to_convergence.size()}, {"values", to_convergence}, {"of", "converged debates"}};
  if (!to_convergence.empty()) {
    int64_t sum = 0;
    for (int64_t v : to_convergence) sum += v;
    convergence["mean"] = static_cast<double>(sum) / static_cast<double>(to_convergence.size());
    convergence["min"] = *std::min_element(to_convergence.begin(), to_convergence.end());
    convergence["max"] = *std::max_element(to_convergence.begin(), to_convergence.end());
  }
  out["debates"] = {{"count", debates}, {"terminations", terminations}, {"rates", rates},
                    {"rounds_to_convergence", convergence}};
  out["rubber_stamp"] = Rate(stamps, challenger_rounds, "done challenger rounds of counted debates");
  for (const DispatchFigures& d : reviewer_dispatches) {
    ReliabilityRow& row = reliability[d.profile];
    if (row.family.empty()) row.family = d.family;
    row.dispatches = d;
  }
  json reviewers = json::array();
  for (const auto& [profile, row] : reliability) {
    const DispatchFigures& d = row.dispatches;
    int64_t clean = std::max<int64_t>(0, d.clean - row.malformed);
    reviewers.push_back({{"profile", profile}, {"family", row.family}, {"rounds", row.rounds},
                         {"dispatches", d.invocations}, {"clean", clean},
                         {"malformed", row.malformed}, {"timeouts", d.timed_out},
                         {"failed", d.failed}, {"gate_absent", row.gate_absent},
                         {"cost_usd", d.cost_usd},
                         {"clean_rate", Rate(clean, d.invocations, "reviewer dispatches")},
                         {"gate_absent_rate", Rate(row.gate_absent, row.rounds, "review rounds")}});
  }
  out["reviewers"] = reviewers;
  out["cost_usd"] = {{"total", cost},
                     {"counted", counted_cost},
                     {"mean_per_counted_review", counted ? json(counted_cost / static_cast<double>(counted))
                                                         : json(nullptr)}};
  return out;
}

}  // namespace conclave::domain
