// Contract: see signoff.h.
#include "domain/signoff.h"

#include "domain/reconcile.h"

namespace conclave::domain {

SignoffOutcome DecideSignoff(std::string_view verdict, std::string_view decision,
                             const CallerIdentity& caller) {
  SignoffOutcome o;
  o.verdict = std::string(verdict);
  o.human = caller.FromTerminal();
  o.applies = verdict == VerdictName(Verdict::kStalemate) ||
              verdict == VerdictName(Verdict::kGateAbsent);
  if (!o.applies) {
    o.note = "verdict " + o.verdict + " cannot be signed off; it stays";
    return o;
  }
  if (decision != kAcceptRisk) {
    o.note = "decision '" + std::string(decision) + "': the verdict stays " + o.verdict;
    return o;
  }
  if (!o.human) {
    o.note = "accept-risk did not come from a terminal: recorded, but it is not a human "
             "sign-off; the verdict stays " + o.verdict;
    return o;
  }
  o.verdict = std::string(VerdictName(Verdict::kApprovedBySignoff));
  o.note = "human sign-off (tty " + caller.tty + "): " + o.verdict;
  return o;
}

}  // namespace conclave::domain
