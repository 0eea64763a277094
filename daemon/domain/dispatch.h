// Dispatch: one attempt of a task on one terminal (DESIGN §1). DispatchState is its
// lifecycle: queued → running → succeeded | failed | timed_out | cancelled | interrupted; a
// queued dispatch may also be cancelled or refused (failed) before it runs. The names are the
// stored strings — never rename one. Every state change goes through MoveDispatch.
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace conclave::domain {

enum class DispatchState { kQueued, kRunning, kSucceeded, kFailed, kTimedOut, kCancelled, kInterrupted };

std::string_view DispatchStateName(DispatchState s);
std::optional<DispatchState> ParseDispatchState(std::string_view name);
const std::vector<DispatchState>& AllDispatchStates();

bool DispatchTransitionAllowed(DispatchState from, DispatchState to);
// True once the dispatch ended (any state after running).
bool DispatchEnded(DispatchState s);

struct Dispatch {
  int64_t id = 0;
  int64_t task_id = 0;
  std::string target;    // address asked for: a handle or a group
  std::string terminal;  // chosen terminal ("" while queued)
  std::string profile, family;
  DispatchState state = DispatchState::kQueued;
  int attempt = 1;
  int op_retries = 0;
  std::string coordinator;
  std::string token;
  int pid = 0;
  int64_t proc_start = 0;  // /proc/<pid>/stat starttime, to never kill a recycled pid
  int64_t created_ms = 0, not_before_ms = 0, started_ms = 0, finished_ms = 0;
  int64_t deadline_ms = 0, last_output_ms = 0;
  // A writer's starting point: its repository's HEAD commit when the worker started ("" when
  // not in a git repository, unborn, or not a writer). Claims are judged against it.
  std::string start_head;
  int timeout_s = 0;
  double budget_usd = 0;
  int exit_code = -1;
  std::string failure_kind, failure_class, fingerprint, evidence;
  double cost_usd = 0;
  bool cost_estimated = false;
  std::string result;        // JSON
  bool worker_done = false;  // the worker reported itself with its token
  int64_t review_round = 0;
};

// Moves d to `to`; refuses an illegal move with FAILED_PRECONDITION (d unchanged).
Status MoveDispatch(Dispatch& d, DispatchState to);

}  // namespace conclave::domain
