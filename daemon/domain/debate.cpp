// Contract: see debate.h. Threads are rebuilt from the rounds on every call: debates are a
// handful of rounds with tens of findings, so clarity wins over incremental state.
#include "domain/debate.h"

#include "common/hash.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>

namespace conclave::domain {
namespace {

constexpr std::array<std::string_view, 4> kTerminationNames = {"continue", "converged",
                                                               "no_movement", "cap_reached"};

DebateSide SideOf(const RoundRecord& round) {
  return round.foreign ? DebateSide::kChallenger : DebateSide::kPrimary;
}

SidePosition& MutablePosition(FindingThread& thread, DebateSide side) {
  return side == DebateSide::kPrimary ? thread.primary : thread.challenger;
}

void Apply(FindingThread& thread, const RoundRecord& round, const Finding& entry) {
  const DebateSide side = SideOf(round);
  const bool owner = side == thread.owner;
  if (owner && entry.stance == Stance::kWithdraw && !thread.owner_family.empty() &&
      !round.family.empty() && round.family != thread.owner_family) {
    return;  // only the family that raised a finding may withdraw it
  }
  SidePosition& position = MutablePosition(thread, side);
  position.spoke = true;
  position.stance = entry.stance;
  position.version = entry;
  position.family = round.family;
  position.round = round.round;
  position.ever_held = position.ever_held || thread.Holds(side);
}

std::vector<std::string> DisputesOf(const std::vector<FindingThread>& threads) {
  std::vector<std::string> ids;
  for (const FindingThread& t : threads) {
    if (t.Disputed()) ids.push_back(t.id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string Fingerprint(const std::vector<std::string>& disputes) {
  if (disputes.empty()) return "";
  std::string joined;
  for (const std::string& id : disputes) joined += id + "\n";
  return "dfp:" + Hex64(Fnv1a64(joined));
}

std::vector<RoundRecord> Prefix(const std::vector<RoundRecord>& rounds, size_t count) {
  return {rounds.begin(), rounds.begin() + static_cast<std::ptrdiff_t>(count)};
}

}  // namespace

std::string_view TerminationName(Termination termination) {
  return kTerminationNames[static_cast<size_t>(termination)];
}

std::optional<Termination> ParseTermination(std::string_view name) {
  for (size_t i = 0; i < kTerminationNames.size(); ++i) {
    if (name == kTerminationNames[i]) return static_cast<Termination>(i);
  }
  return std::nullopt;
}

const SidePosition& FindingThread::Position(DebateSide side) const {
  return side == DebateSide::kPrimary ? primary : challenger;
}

bool FindingThread::Holds(DebateSide side) const {
  const SidePosition& p = Position(side);
  if (!p.spoke) return false;
  if (side == owner) return p.stance != Stance::kWithdraw;
  return p.stance == Stance::kNew || p.stance == Stance::kAgree ||
         p.stance == Stance::kStillPresent;
}

bool FindingThread::Rejects(DebateSide side) const {
  const SidePosition& p = Position(side);
  return side != owner && p.spoke && p.stance == Stance::kRebut;
}

bool FindingThread::Disputed() const {
  const DebateSide other =
      owner == DebateSide::kPrimary ? DebateSide::kChallenger : DebateSide::kPrimary;
  return Holds(owner) && Rejects(other);
}

std::string CheckRoundSequence(const std::vector<RoundRecord>& rounds) {
  for (size_t i = 0; i < rounds.size(); ++i) {
    if (rounds[i].round != static_cast<int>(i)) {
      return "round at position " + std::to_string(i) + " is numbered " +
             std::to_string(rounds[i].round);
    }
    if (rounds[i].foreign != (i % 2 == 1)) {
      return "round " + std::to_string(i) + (rounds[i].foreign ? " is" : " is not") +
             " marked foreign";
    }
  }
  return "";
}

std::vector<FindingThread> BuildThreads(const std::vector<RoundRecord>& rounds) {
  std::vector<FindingThread> threads;
  std::map<std::string, size_t> by_id;
  for (const RoundRecord& round : rounds) {
    for (const Finding& entry : round.findings) {
      std::vector<size_t> targets;
      if (auto it = by_id.find(entry.id); it != by_id.end()) {
        targets.push_back(it->second);
      } else if (entry.stance != Stance::kNew) {
        for (const std::string& ref : entry.refs) {
          if (auto r = by_id.find(ref); r != by_id.end()) targets.push_back(r->second);
        }
      }
      if (targets.empty()) {
        if (entry.stance == Stance::kWithdraw || entry.stance == Stance::kFixed) {
          continue;  // withdraws / fixes nothing known
        }
        FindingThread thread;
        thread.id = entry.id;
        thread.owner = SideOf(round);
        thread.owner_family = round.family;
        thread.first_round = round.round;
        thread.original = entry;
        Finding raised = entry;
        raised.stance = Stance::kNew;  // whatever its stance, a first mention is a claim
        Apply(thread, round, raised);
        by_id.emplace(entry.id, threads.size());
        threads.push_back(std::move(thread));
        continue;
      }
      for (size_t target : targets) Apply(threads[target], round, entry);
    }
  }
  return threads;
}

std::vector<std::string> OpenDisputes(const std::vector<RoundRecord>& rounds) {
  return DisputesOf(BuildThreads(rounds));
}

std::string DisagreementFingerprint(const std::vector<RoundRecord>& rounds) {
  return Fingerprint(OpenDisputes(rounds));
}

int ChallengerInvocations(const std::vector<RoundRecord>& rounds) {
  return static_cast<int>(
      std::count_if(rounds.begin(), rounds.end(), [](const RoundRecord& r) { return r.foreign; }));
}

Termination EvaluateDebate(const std::vector<RoundRecord>& rounds, int cap) {
  if (rounds.empty()) return Termination::kContinue;
  const int challenges = ChallengerInvocations(rounds);
  if (challenges == 0) return cap <= 0 ? Termination::kConverged : Termination::kContinue;
  const std::vector<FindingThread> threads = BuildThreads(rounds);
  const int last_round = rounds.back().round;
  const bool raised_new = std::any_of(threads.begin(), threads.end(),
                                      [&](const auto& t) { return t.first_round == last_round; });
  const std::vector<std::string> disputes = DisputesOf(threads);
  if (rounds.back().foreign) {
    return !raised_new && disputes.empty() ? Termination::kConverged : Termination::kContinue;
  }
  if (disputes.empty()) {
    // Convergence is declared by a foreign round that brings nothing new; the primary's
    // answer (even a full concession) hands the floor back to a challenger while cap remains.
    (void)raised_new;
    return challenges >= cap ? Termination::kConverged : Termination::kContinue;
  }
  if (challenges >= cap) return Termination::kCapReached;
  // The previous primary response round ends the previous round pair.
  size_t previous = rounds.size() - 1;
  while (previous > 0 && rounds[previous - 1].foreign) --previous;  // skip back over challenges
  if (previous > 0) {
    --previous;  // now at the primary round before the last challenge
    if (Fingerprint(disputes) == DisagreementFingerprint(Prefix(rounds, previous + 1))) {
      return Termination::kNoMovement;
    }
  }
  return Termination::kContinue;
}

int NextRoundNumber(const std::vector<RoundRecord>& rounds) {
  return rounds.empty() ? 0 : rounds.back().round + 1;
}

bool NextIsForeign(const std::vector<RoundRecord>& rounds) {
  return NextRoundNumber(rounds) % 2 == 1;
}

}  // namespace conclave::domain
