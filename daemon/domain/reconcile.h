// Contract: reconciliation of review findings and the fail-closed gate (seed 000 §4
// "Reconciliation", seed 001 §7 synthesis, seed 002 gate invariants).
//
// Overlap ("the other side covered it"): same category AND same path AND (|line diff| <= 3,
// or either line is 0). A finding is "materially different" when no finding of the other
// side overlaps it — a category or a location the other side did not cover. Restating the
// same defect at the same location is not materially different.
//
// Reconcile (debate shape; threads as in debate.h) yields one entry per thread:
//   disposition: the primary and a challenger both reported it (one endorsed the other's id,
//     or each raised an overlapping finding) → "adopted_both" (high confidence);
//     primary only → "adopted_primary"; challenger only → "escalated_foreign" (a strong
//     signal, escalated for adjudication, never dropped).
//   open: some side still holds it. The owner drops its finding only by withdraw; a
//     challenger's finding is therefore closed only by a challenger (of the same family)
//     withdrawing it — a primary rebut or withdraw has no effect on it.
//   severity: the strictest among the versions the holding sides currently state.
//   from_foreign: a holding side's family differs from the writer's (for a closed entry: the
//     owner's). Unknown (empty) families count as foreign.
// SynthesizeParallel (parallel lines): one entry per finding; "adopted_both" when another
// line reported an overlapping finding, else "adopted_single"; on contradicting severities of
// overlapping findings the stricter one wins; open unless the line itself withdrew it.
//
// DecideGate, first rule that applies:
//   1. any reviewer missing, crashed or timed out → gate-absent (never approved);
//   2. mechanical skip → APPROVED, reason says no reviewer ran by mode;
//   3. termination kContinue (the debate has not finished) → gate-absent;
//   4. kCapReached → adversarial-stalemate (escalate; never "trust the primary");
//   5. any open BLOCKER (from anyone: stricter than the seed's foreign-only rule) or open
//      foreign HIGH → BLOCKED;
//   6. any open HIGH/MAJOR/MEDIUM, or LOW when low_is_material (seed 001 §3e: "any material
//      finding including LOW → NEEDS_CHANGES") → NEEDS_CHANGES;
//   7. otherwise (only INFO, or LOW when !low_is_material, or nothing) → APPROVED.
// kNoMovement and kConverged fall through to rules 5-7: open disputed findings stay open, so
// an unresolved foreign BLOCKER/HIGH still blocks. Parallel shapes pass kConverged.
// Pure functions, no I/O, thread-compatible.
#ifndef CONCLAVE_DOMAIN_RECONCILE_H_
#define CONCLAVE_DOMAIN_RECONCILE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/debate.h"
#include "domain/findings.h"

namespace conclave::domain {

inline constexpr std::string_view kAdoptedBoth = "adopted_both";
inline constexpr std::string_view kAdoptedPrimary = "adopted_primary";
inline constexpr std::string_view kEscalatedForeign = "escalated_foreign";
inline constexpr std::string_view kAdoptedSingle = "adopted_single";  // parallel lines only

struct ReconciledFinding {
  Finding finding;     // owner's latest version, severity as reconciled
  std::string family;  // family that raised it
  int round = 0;       // round it was raised in (0 for parallel lines)
  bool from_foreign = false;
  std::string disposition;
  bool open = true;
  std::vector<std::string> overlaps;  // ids of the other side's overlapping findings
  // Provenance the service fills in (carry_over.h stores it): the raising reviewer's profile
  // and role (primary | challenger | line), the revision it was raised in, whether it was
  // carried from an earlier revision and the answers it got there ("<family>:<stance>").
  std::string profile, role;
  int revision = 0;
  bool carried = false;
  std::vector<std::string> answers;
};

// One parallel review line's answer.
struct LineFindings {
  std::string profile;
  std::string family;
  std::vector<Finding> findings;
  int round = 0;             // the line's round number (copied to its entries)
  std::string role = "line";
};

// kApprovedBySignoff is never decided by DecideGate: only a human sign-off on a stalemate or
// gate-absent decision gate sets it (signoff.h).
enum class Verdict { kApproved, kNeedsChanges, kBlocked, kStalemate, kGateAbsent, kApprovedBySignoff };

// "APPROVED" | "NEEDS_CHANGES" | "BLOCKED" | "adversarial-stalemate" | "gate-absent" |
// "APPROVED_BY_SIGNOFF".
std::string_view VerdictName(Verdict verdict);
// Exact inverse of VerdictName; nullopt for anything else.
std::optional<Verdict> ParseVerdict(std::string_view name);

struct GateInput {
  bool any_reviewer_missing_or_failed = false;
  Termination termination = Termination::kContinue;  // fail closed: unset → gate-absent
  std::vector<ReconciledFinding> findings;
  bool mechanical_skip = false;
  bool low_is_material = true;  // seed 001; false = LOW alone does not block APPROVED
};

struct GateDecision {
  Verdict verdict = Verdict::kGateAbsent;
  std::string reason;     // for a person: which rule fired and which finding ids
  bool escalate = false;  // stalemate, gate absent, or an open escalated_foreign finding
};

bool Overlaps(const Finding& a, const Finding& b);
// True when no finding in `other_side` overlaps `finding`.
bool IsMateriallyDifferent(const Finding& finding, const std::vector<Finding>& other_side);

// REQUIRES: CheckRoundSequence(rounds) is "".
std::vector<ReconciledFinding> Reconcile(const std::vector<RoundRecord>& rounds,
                                         std::string_view writer_family);

std::vector<ReconciledFinding> SynthesizeParallel(const std::vector<LineFindings>& lines,
                                                  std::string_view writer_family);

// For the Phase 0 report: per family, the open entries it raised that are materially
// different from every other family's open entries (entries adopted by both sides never
// count). Every family that raised an open entry appears, possibly with 0.
std::map<std::string, int> UniqueFindingsPerFamily(const std::vector<ReconciledFinding>& findings);

GateDecision DecideGate(const GateInput& input);
Verdict ComputeVerdict(const GateInput& input);  // DecideGate(input).verdict

}  // namespace conclave::domain

#endif  // CONCLAVE_DOMAIN_RECONCILE_H_
