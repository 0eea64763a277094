// Contract: termination of a capped cross-family review debate (seed 000 §4), as pure
// functions over the completed rounds. Called by the review service after each round.
//
// Rounds: round 0 = the same-source primary; odd rounds = a challenger ("foreign", family
// differs from the writer's and the primary's); even rounds >= 2 = the primary answering the
// challenge before it. REQUIRES (CheckRoundSequence): rounds numbered 0, 1, 2, ... with
// foreign == (round is odd). The cap counts challenger invocations, not rounds.
//
// Threads. Finding ids are the daemon's (finding_ids.h: "r<round>.<family>.<id>"): a reviewer
// answers an earlier finding by naming its full id (or, for a stance other than new with an
// unknown id, by listing known ids in refs). The first side to use an id owns that finding. A
// side's latest stance on a thread is its position:
//   owner:     new/agree/rebut/fixed/still_present = holds the finding (nothing is fixed within
//              one revision); withdraw = dropped it. An owner-side withdraw counts only from
//              the owner's own family (one challenger cannot withdraw another's finding).
//   other:     new/agree/still_present = holds (endorses) it; rebut = rejects it; withdraw
//              and fixed = neutral.
// "Open disagreement" = a thread the owner holds and the other side rejects: a rebut the
// owner has not withdrawn for, and the rebutting side has not taken back (agree/withdraw).
// An owner's "agree" after a rebut is read as standing by the finding, not as conceding
// (fail closed: only withdraw concedes). Silence changes nothing.
// A round's "new findings" = threads first raised in that round.
//
// EvaluateDebate(rounds, cap), after the last completed round (k = challenger rounds so far):
//   - no rounds → kContinue.
//   - round 0 → kConverged when cap <= 0 (no challenger), else kContinue.
//   - after a challenger round → kConverged when it raised no new findings and no
//     disagreement is open (the primary has nothing to answer); else kContinue (the primary
//     always answers the last challenge).
//   - after a primary response round, with D = open disagreements:
//       D empty:     kConverged when k >= cap (nothing is disputed; the primary's extra
//                    findings are adopted); else kContinue — convergence is declared only by
//                    a foreign round that brings nothing new, so a challenger gets the floor.
//       D non-empty: kCapReached when k >= cap (→ verdict adversarial-stalemate, never
//                    "trust the primary"); else kNoMovement when D's fingerprint equals the
//                    fingerprint after the previous primary response round (two consecutive
//                    round pairs without movement: stop early, keep the remaining cap);
//                    else kContinue.
// Pure functions, no I/O, thread-compatible.
#ifndef CONCLAVE_DOMAIN_DEBATE_H_
#define CONCLAVE_DOMAIN_DEBATE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/findings.h"

namespace conclave::domain {

struct RoundRecord {
  int round = 0;
  bool foreign = false;  // a challenger round
  std::vector<Finding> findings;
  std::string family;  // the family of the reviewer that spoke in this round
};

enum class Termination { kContinue, kConverged, kNoMovement, kCapReached };

// "continue" | "converged" | "no_movement" | "cap_reached".
std::string_view TerminationName(Termination termination);
// Exact inverse of TerminationName; nullopt for anything else.
std::optional<Termination> ParseTermination(std::string_view name);

enum class DebateSide { kPrimary, kChallenger };

struct SidePosition {
  bool spoke = false;
  Stance stance = Stance::kNew;  // latest stance of this side on the thread
  Finding version;               // the entry carrying that stance
  std::string family;            // family of the round it came from
  int round = -1;
  bool ever_held = false;  // held the finding at some point
};

struct FindingThread {
  std::string id;
  DebateSide owner = DebateSide::kPrimary;
  std::string owner_family;
  int first_round = 0;
  Finding original;  // the entry that raised it
  SidePosition primary, challenger;

  const SidePosition& Position(DebateSide side) const;
  bool Holds(DebateSide side) const;
  bool Rejects(DebateSide side) const;
  bool Disputed() const;  // owner holds, other side rejects
};

// "" when rounds satisfy the REQUIRES above, else what is wrong.
std::string CheckRoundSequence(const std::vector<RoundRecord>& rounds);

// All threads, in order of first mention.
std::vector<FindingThread> BuildThreads(const std::vector<RoundRecord>& rounds);

// Sorted ids of the open disagreements after `rounds`.
std::vector<std::string> OpenDisputes(const std::vector<RoundRecord>& rounds);

// "" when no disagreement is open; else "dfp:" + 16 hex digits (FNV-1a 64) of the sorted
// open dispute ids — stable across runs and processes.
std::string DisagreementFingerprint(const std::vector<RoundRecord>& rounds);

// Number of challenger rounds in `rounds`.
int ChallengerInvocations(const std::vector<RoundRecord>& rounds);

Termination EvaluateDebate(const std::vector<RoundRecord>& rounds, int cap);

// The number of the round to run next (0 when none ran) and whether it is a challenger's.
int NextRoundNumber(const std::vector<RoundRecord>& rounds);
bool NextIsForeign(const std::vector<RoundRecord>& rounds);

}  // namespace conclave::domain

#endif  // CONCLAVE_DOMAIN_DEBATE_H_
