// Contract: see resume_brief.h.
#include "domain/resume_brief.h"

#include "domain/failure_kind.h"
#include "domain/flow.h"

namespace conclave::domain {
namespace {

// Evidence may quote the worker's own stderr: one line, bounded, never a heading of its own.
std::string OneLine(const std::string& s, size_t max) {
  std::string out;
  for (char c : s) out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  if (out.size() > max) {
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out = out.substr(0, cut) + "...";
  }
  return out;
}

bool EndedEarly(const Dispatch& d) {
  if (d.state == DispatchState::kInterrupted) return true;
  if (d.state != DispatchState::kFailed && d.state != DispatchState::kTimedOut) return false;
  auto kind = ParseFailureKind(d.failure_kind);
  return kind && IsOperational(*kind) && *kind != FailureKind::kSpawnFailed &&
         *kind != FailureKind::kInternalError && *kind != FailureKind::kCrashLoop;
}

// The same working directory: the same terminal, or two writer terminals of one flow (a
// writer swapped to another profile works in the flow's worktree).
bool SamePlace(const std::string& a, const std::string& b) {
  if (a == b) return true;
  int64_t flow = FlowOfTerminal(a);
  return flow != 0 && flow == FlowOfTerminal(b);
}

}  // namespace

std::optional<ResumePoint> ResumeFrom(const std::vector<Dispatch>& task_dispatches,
                                      int64_t current_id) {
  size_t at = task_dispatches.size();
  for (size_t i = 0; i < task_dispatches.size(); ++i) {
    if (task_dispatches[i].id == current_id) at = i;
  }
  if (at == 0 || at == task_dispatches.size()) return std::nullopt;
  const Dispatch& prev = task_dispatches[at - 1];
  // Only on the same terminal (the same working directory): another one's repository holds
  // none of this partial work.
  const std::string& terminal = task_dispatches[at].terminal;
  if (!EndedEarly(prev) || !SamePlace(prev.terminal, terminal)) return std::nullopt;
  ResumePoint p;
  p.previous_dispatch = prev.id;
  p.failure_kind = prev.failure_kind;
  p.evidence = prev.evidence;
  // The partial work is everything since the first of the consecutive early endings began.
  for (size_t i = at;
       i-- > 0 && EndedEarly(task_dispatches[i]) && SamePlace(task_dispatches[i].terminal, terminal);) {
    if (!task_dispatches[i].start_head.empty()) p.base_head = task_dispatches[i].start_head;
  }
  return p;
}

std::string ResumeOpening(const ResumePoint& p, const std::string& partial_work) {
  std::string out = std::string(kResumeMarker) + ": an earlier attempt at this task (dispatch " +
                    std::to_string(p.previous_dispatch) + ") ended early (" + p.failure_kind +
                    (p.evidence.empty() ? "" : ", reported as: " + OneLine(p.evidence, 300)) +
                    ").\n";
  if (!partial_work.empty()) {
    out += "The work it left in this repository since it started (" +
           p.base_head.substr(0, 12) + "):\n" + partial_work;
    if (out.back() != '\n') out += '\n';
  } else {
    out += "Its partial work, if any, is still in your working directory.\n";
  }
  out += "Verify and finalize: first check what is already done (read the changes, run the "
         "checks), then finish what is missing. Do not start over and do not redo finished "
         "work.\n";
  return out;
}

}  // namespace conclave::domain
