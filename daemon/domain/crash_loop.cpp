// Contract: see crash_loop.h.
#include "domain/crash_loop.h"

namespace conclave::domain {
namespace {

bool DiedSoon(int64_t started_ms, int64_t ended_ms, int64_t window_ms) {
  return started_ms > 0 && ended_ms >= started_ms && ended_ms - started_ms <= window_ms;
}

}  // namespace

bool IsCrashLoop(const std::vector<Dispatch>& earlier, const Dispatch& current, int64_t now_ms,
                 int64_t window_ms, int limit) {
  if (limit <= 0 || !DiedSoon(current.started_ms, now_ms, window_ms)) return false;
  int deaths = 1;
  for (auto it = earlier.rbegin(); it != earlier.rend() && deaths < limit; ++it) {
    if (it->id == current.id) continue;
    const bool unclean = it->state == DispatchState::kInterrupted &&
                         it->failure_kind == "interrupted" && it->evidence == kDaemonDiedEvidence;
    if (!unclean || !DiedSoon(it->started_ms, it->finished_ms, window_ms)) break;
    ++deaths;
  }
  return deaths >= limit;
}

}  // namespace conclave::domain
