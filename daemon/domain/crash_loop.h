// Crash-loop guard (issue 11 item 8): a dispatch during which the daemon died uncleanly,
// again and again, soon after the dispatch (re)started, is failed instead of re-queued, so a
// brief or an output that crashes conclaved cannot crash-loop it under systemd. Only deaths
// that recovery found (a dispatch still `running` at start) count: a clean shutdown ends its
// dispatches itself (evidence "daemon shut down during the run") and breaks the chain.
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "domain/dispatch.h"

namespace conclave::domain {

// The evidence recovery stores on a dispatch it found running after an unclean death.
inline constexpr std::string_view kDaemonDiedEvidence =
    "conclaved restarted while the dispatch was running";

inline constexpr int kCrashLoopLimit = 3;

// True when `current` (found running by recovery at now_ms) started at most window_ms before
// now, and the task's limit-1 dispatches just before it (`earlier`, the task's other
// dispatches, oldest first) each ended the same way: interrupted by an unclean death at most
// window_ms after their start. Dispatches of other kinds in between break the chain.
bool IsCrashLoop(const std::vector<Dispatch>& earlier, const Dispatch& current, int64_t now_ms,
                 int64_t window_ms, int limit = kCrashLoopLimit);

}  // namespace conclave::domain
