// Contract: see reconcile.h.
#include "domain/reconcile.h"

#include "domain/family.h"

#include <array>
#include <cstdlib>

namespace conclave::domain {
namespace {

constexpr std::array<std::string_view, 6> kVerdictNames = {
    "APPROVED", "NEEDS_CHANGES", "BLOCKED", "adversarial-stalemate", "gate-absent",
    "APPROVED_BY_SIGNOFF"};
constexpr int kOverlapLines = 3;

// The owner's current statement of the thread, as the entry a report shows.
Finding CurrentVersion(const FindingThread& thread) {
  Finding version = thread.Position(thread.owner).version;
  version.id = thread.id;
  return version;
}

ReconciledFinding FromThread(const FindingThread& t, const std::vector<FindingThread>& threads,
                             std::string_view writer_family) {
  ReconciledFinding out;
  out.finding = CurrentVersion(t);
  out.family = t.owner_family;
  out.round = t.first_round;
  out.role = t.owner == DebateSide::kPrimary ? "primary" : "challenger";
  bool severity_set = false;
  for (DebateSide side : {DebateSide::kPrimary, DebateSide::kChallenger}) {
    if (!t.Holds(side)) continue;
    const SidePosition& p = t.Position(side);
    out.finding.severity =
        severity_set ? Stricter(out.finding.severity, p.version.severity) : p.version.severity;
    severity_set = true;
    out.from_foreign = out.from_foreign || IsForeignFamily(p.family, writer_family);
  }
  out.open = severity_set;
  if (!out.open) out.from_foreign = IsForeignFamily(t.owner_family, writer_family);
  bool by_primary = t.primary.ever_held;
  bool by_challenger = t.challenger.ever_held;
  for (const FindingThread& u : threads) {
    if (u.owner == t.owner || !Overlaps(out.finding, CurrentVersion(u))) continue;
    out.overlaps.push_back(u.id);
    (u.owner == DebateSide::kPrimary ? by_primary : by_challenger) = true;
  }
  out.disposition = std::string(by_primary && by_challenger ? kAdoptedBoth
                                : by_primary                ? kAdoptedPrimary
                                                            : kEscalatedForeign);
  return out;
}

std::string JoinIds(const std::vector<const ReconciledFinding*>& entries) {
  std::string out;
  for (const ReconciledFinding* e : entries) {
    if (!out.empty()) out += ", ";
    out += e->finding.id + " (" + std::string(SeverityName(e->finding.severity)) + ", " +
           e->family + ")";
  }
  return out;
}

}  // namespace

std::string_view VerdictName(Verdict verdict) {
  return kVerdictNames[static_cast<size_t>(verdict)];
}

std::optional<Verdict> ParseVerdict(std::string_view name) {
  for (size_t i = 0; i < kVerdictNames.size(); ++i) {
    if (name == kVerdictNames[i]) return static_cast<Verdict>(i);
  }
  return std::nullopt;
}

bool Overlaps(const Finding& a, const Finding& b) {
  if (a.category != b.category || a.path != b.path) return false;
  return a.line == 0 || b.line == 0 || std::abs(a.line - b.line) <= kOverlapLines;
}

bool IsMateriallyDifferent(const Finding& finding, const std::vector<Finding>& other_side) {
  for (const Finding& other : other_side) {
    if (Overlaps(finding, other)) return false;
  }
  return true;
}

std::vector<ReconciledFinding> Reconcile(const std::vector<RoundRecord>& rounds,
                                         std::string_view writer_family) {
  const std::vector<FindingThread> threads = BuildThreads(rounds);
  std::vector<ReconciledFinding> out;
  out.reserve(threads.size());
  for (const FindingThread& t : threads) out.push_back(FromThread(t, threads, writer_family));
  return out;
}

std::vector<ReconciledFinding> SynthesizeParallel(const std::vector<LineFindings>& lines,
                                                  std::string_view writer_family) {
  std::vector<ReconciledFinding> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    for (const Finding& f : lines[i].findings) {
      ReconciledFinding entry;
      entry.finding = f;
      entry.family = lines[i].family;
      entry.round = lines[i].round;
      entry.profile = lines[i].profile;
      entry.role = lines[i].role;
      entry.from_foreign = IsForeignFamily(lines[i].family, writer_family);
      entry.disposition = std::string(kAdoptedSingle);
      entry.open = f.stance != Stance::kWithdraw;
      for (size_t j = 0; j < lines.size(); ++j) {
        for (const Finding& g : lines[j].findings) {
          if (j == i || g.stance == Stance::kWithdraw || !Overlaps(f, g)) continue;
          entry.overlaps.push_back(g.id);
          entry.finding.severity = Stricter(entry.finding.severity, g.severity);
          entry.disposition = std::string(kAdoptedBoth);
        }
      }
      out.push_back(std::move(entry));
    }
  }
  return out;
}

std::map<std::string, int> UniqueFindingsPerFamily(const std::vector<ReconciledFinding>& findings) {
  std::map<std::string, int> counts;
  for (const ReconciledFinding& e : findings) {
    if (!e.open) continue;
    int& count = counts[e.family];
    if (e.disposition == kAdoptedBoth) continue;
    bool covered = false;
    for (const ReconciledFinding& other : findings) {
      covered = covered || (other.open && !SameFamily(other.family, e.family) &&
                            Overlaps(e.finding, other.finding));
    }
    if (!covered) ++count;
  }
  return counts;
}

GateDecision DecideGate(const GateInput& input) {
  if (input.any_reviewer_missing_or_failed) {
    return {Verdict::kGateAbsent,
            "a reviewer was missing, crashed or timed out: the gate did not run", true};
  }
  if (input.mechanical_skip) {
    return {Verdict::kApproved, "mechanical skip: the review mode dispatches no reviewer", false};
  }
  if (input.termination == Termination::kContinue) {
    return {Verdict::kGateAbsent, "the debate has not terminated: the gate did not run", true};
  }
  if (input.termination == Termination::kCapReached) {
    return {Verdict::kStalemate,
            "the challenger cap was reached with the disagreement still open: escalated", true};
  }
  std::vector<const ReconciledFinding*> blocking, material;
  bool escalate = false;
  for (const ReconciledFinding& e : input.findings) {
    if (!e.open) continue;
    escalate = escalate || e.disposition == kEscalatedForeign;
    const Severity s = e.finding.severity;
    if (s == Severity::kBlocker || (s == Severity::kHigh && e.from_foreign)) {
      blocking.push_back(&e);
    } else if (s != Severity::kInfo && (s != Severity::kLow || input.low_is_material)) {
      material.push_back(&e);
    }
  }
  if (!blocking.empty()) {
    return {Verdict::kBlocked, "open blocking findings: " + JoinIds(blocking), escalate};
  }
  if (!material.empty()) {
    return {Verdict::kNeedsChanges, "open findings: " + JoinIds(material), escalate};
  }
  return {Verdict::kApproved, input.findings.empty() ? "no findings" : "no open material findings",
          escalate};
}

Verdict ComputeVerdict(const GateInput& input) { return DecideGate(input).verdict; }

}  // namespace conclave::domain
