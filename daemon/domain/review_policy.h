// Contract: review-mode selection and the cross-family rule (DESIGN §1 "Reviews", seed 001
// §3 review modes, seed 000 §4 debate). PlanReview turns a request into the reviewers to
// dispatch, or refuses it with a text that names the profiles and families involved (the api
// layer maps a refusal to FAILED_PRECONDITION). Families compare case-insensitively; a
// candidate with an empty family is refused (cross-family cannot be shown, fail closed).
//
// Parallel modes fill `lines`; explicit reviewers are request.primary then
// request.challengers, in that order:
//   mechanical: no reviewer; ok with skip_reason (lifecycle gates still apply).
//   simple:     exactly one reviewer with family != writer. An explicit one that shares the
//               writer's family is refused; otherwise the first cross-family profile of
//               `available` (config order).
//   ordinary:   exactly one reviewer: the explicit one (refused on collision), else
//               default_profile, swapped to the first available profile of another family
//               when default_profile's family == writer's (no default_profile: the first
//               cross-family profile; a default_profile not in `available` → refused).
//   strong:     two reviewers, each family != writer and != each other. Explicit ones are
//               validated; missing lines are filled from default_profile first, then
//               `available` in config order. Not enough families → refused. The
//               one-Strong-per-session guard is the daemon's (atomic, in SQLite), not here.
// Debate fills `primary` and `challengers`:
//   primary = request.primary, else default_profile (may share the writer's family: it is
//   the same-source reliability floor). Each explicit challenger must differ in family from
//   the writer and from the primary (refused otherwise). Without explicit challengers the
//   first eligible profile of `available` is taken. cap == 0 needs no challenger (any
//   explicit ones are still validated); cap > 0 with none eligible → refused.
// Every mode: cap < 0 → refused; writer_family empty → refused (except mechanical); plan.cap =
// request.cap (the caller passes the configured default when the user gave none). Pure functions,
// no I/O, thread-compatible.
#ifndef CONCLAVE_DOMAIN_REVIEW_POLICY_H_
#define CONCLAVE_DOMAIN_REVIEW_POLICY_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::domain {

enum class ReviewMode { kMechanical, kSimple, kOrdinary, kStrong, kDebate };

// "mechanical" | "simple" | "ordinary" | "strong" | "debate".
std::string_view ReviewModeName(ReviewMode mode);
// Case-insensitive inverse of ReviewModeName; nullopt for anything else.
std::optional<ReviewMode> ParseReviewMode(std::string_view name);

struct ReviewerCandidate {
  std::string profile;
  std::string family;
};

struct ReviewPlanRequest {
  ReviewMode mode = ReviewMode::kOrdinary;
  std::string writer_family;
  std::optional<ReviewerCandidate> primary;
  std::vector<ReviewerCandidate> challengers;
  std::vector<ReviewerCandidate> available;  // all profiles, config order
  std::string default_profile;
  int cap = 2;
};

struct ReviewPlan {
  bool ok = false;
  std::string error;                           // names the profiles and families when !ok
  std::vector<ReviewerCandidate> lines;        // parallel modes
  std::optional<ReviewerCandidate> primary;    // debate
  std::vector<ReviewerCandidate> challengers;  // debate
  int cap = 0;
  std::string skip_reason;  // mechanical
};

ReviewPlan PlanReview(const ReviewPlanRequest& request);

// Index into plan.challengers of the challenger for debate round `round` (odd, ≥ 1): they
// take turns, round 1 → 0, round 3 → 1, ... REQUIRES: challenger_count > 0, round odd.
size_t ChallengerIndexForRound(int round, size_t challenger_count);

}  // namespace conclave::domain

#endif  // CONCLAVE_DOMAIN_REVIEW_POLICY_H_
