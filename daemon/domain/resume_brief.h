// Resume, don't restart (seed 002; issue 11 item 8): a writer's dispatch that follows an
// attempt which ended early — the daemon died or shut down, a timeout, a lost heartbeat, a
// provider or transport error — starts by verifying and finalizing the partial work that
// attempt left, not from scratch. ResumeFrom finds that attempt among the task's dispatches;
// ResumeOpening is the text that opens the new brief (the partial work itself, `git diff
// --stat` against where the early attempts started, comes from exec/partial_work).
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "domain/dispatch.h"

namespace conclave::domain {

struct ResumePoint {
  int64_t previous_dispatch = 0;        // the attempt just before, which ended early
  std::string failure_kind, evidence;   // how it ended
  std::string base_head;  // HEAD when the first of the consecutive early endings started ("")
};

// The marker line every resume opening starts with (workers and tests look for it).
inline constexpr const char* kResumeMarker = "RESUME, DON'T RESTART";

// For the dispatch `current_id` among a task's dispatches (oldest first): the point to resume
// from when the dispatch just before it ended early (interrupted, or failed or timed out with
// an operational kind other than spawn_failed, internal_error and crash_loop). A counted
// failure, a cancel, a success or no earlier dispatch: nullopt.
std::optional<ResumePoint> ResumeFrom(const std::vector<Dispatch>& task_dispatches,
                                      int64_t current_id);

// The opening: which attempt ended how, the partial work ("" = unknown: not in a git
// repository), and the instruction to verify and finalize rather than start over.
std::string ResumeOpening(const ResumePoint& p, const std::string& partial_work);

}  // namespace conclave::domain
