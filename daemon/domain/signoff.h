// Human sign-off on a review (issue 12 item 5; seed 002: "gate absent → explicit human
// sign-off"). A stalemate or gate-absent verdict opens a decision gate over the review with
// the options below. Resolving it records a Signoff (review_record.h) with the caller's
// identity, and DecideSignoff says what the verdict becomes:
//   - decision "accept-risk" from a terminal (a human) → APPROVED_BY_SIGNOFF;
//   - "accept-risk" not from a terminal → recorded, but not a human sign-off: the verdict
//     stays (a script or a model cannot sign off for a person);
//   - any other decision → the verdict stays (blocked).
// Only stalemate and gate-absent verdicts can be signed off. `review gate` still exits 0 only
// for APPROVED, and for APPROVED_BY_SIGNOFF only with --accept-signoff. Pure.
#pragma once

#include <string>
#include <string_view>

#include "domain/caller_identity.h"

namespace conclave::domain {

inline constexpr std::string_view kAcceptRisk = "accept-risk";
// The gate options, as JSON arrays of strings.
inline constexpr const char* kStalemateGateOptions = R"(["accept-risk","fix","escalate"])";
inline constexpr const char* kGateAbsentGateOptions = R"(["accept-risk","retry","reject"])";

struct SignoffOutcome {
  bool applies = false;  // the verdict is one a sign-off can change
  bool human = false;
  std::string verdict;  // after the sign-off
  std::string note;     // what happened, for the coordinator
};

SignoffOutcome DecideSignoff(std::string_view verdict, std::string_view decision,
                             const CallerIdentity& caller);

}  // namespace conclave::domain
