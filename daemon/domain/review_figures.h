// The Phase-0 figures (seed 000 §6; issue 12 item 9), computed from finished reviews as pure
// functions so they can be checked against a hand-computed set. Every rate names what it
// counts: {"value", "numerator", "denominator", "of"}, value null when the denominator is 0.
//
// Which reviews count. A finished review is *counted* for findings figures unless it is
// mechanical (no reviewer), gate-absent (termination reviewer_missing / no_foreign_reviewer,
// whatever a later sign-off made of its verdict) or BLOCKED before any reviewer ran
// (strong_session_used). Excluded reviews still feed reviewer reliability and cost.
//   - unique findings: per family and severity, the open entries of a counted review's final
//     reconciled list that no other family covered (adopted_both entries never count; "covered"
//     is the materially-different rubric of reconcile.h);
//   - incremental value, over counted reviews that had a same-source and a foreign side (a
//     debate with a challenger round, or a --measure review): open entries only the foreign
//     (challenger) side raised, only the same-source (primary) side raised, and both;
//     measured reviews (the two sides independent, seed 000 Phase 0) are also given apart;
//   - terminations (converged / no_movement / cap_reached) over counted debates only (a
//     measured review is not a debate); rounds to convergence = rounds of the final revision
//     of each converged debate;
//   - rubber-stamp rate: challenger rounds of counted debates that only agreed — at least one
//     entry and every entry agree or still_present — over all done challenger rounds there;
//   - reviewer reliability per profile: reviewer dispatches (clean / timeouts / failed, from
//     the dispatch figures), malformed answers and rounds that ended gate-absent (failed or
//     malformed), over every finished review;
//   - cost: per review the sum of its rounds; overall the sum over finished reviews.
// Pure, thread-compatible.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "domain/review_record.h"

namespace conclave::domain {

struct ReviewFacts {
  Review review;                   // status done
  std::vector<ReviewRound> rounds;  // every revision's rounds
};

// Dispatch figures of one profile (reviewer dispatches, or all dispatches).
struct DispatchFigures {
  std::string profile, family;
  int64_t invocations = 0, clean = 0, timed_out = 0, failed = 0;
  double cost_usd = 0;
};

// Why a finished review is not counted for findings figures ("" = counted).
std::string ExclusionOf(const Review& r);

// {"value", "numerator", "denominator", "of"}.
nlohmann::json Rate(int64_t numerator, int64_t denominator, const std::string& of);

// The whole report: reviews, per_review, unique_findings, incremental_value, debates,
// rubber_stamp, reviewers, cost_usd; plus the flat keys the ReportReply carries
// (unique_findings_per_family, converged, no_movement, cap_reached).
nlohmann::json ReviewFigures(const std::vector<ReviewFacts>& reviews,
                             const std::vector<DispatchFigures>& reviewer_dispatches);

}  // namespace conclave::domain
