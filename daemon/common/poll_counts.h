// PollCounts: how the loop's idle spells began and ended with a poll of gRPC's queue
// (api/queue_loop.h). GetStatus shows them (counts loop_polls, loop_polls_caught) and the exit
// log prints them: whether the poll ran, and whether it paid.
// Thread-safety: the loop writes, any thread reads.
#pragma once

#include <atomic>
#include <cstdint>

namespace conclave {

struct PollCounts {
  std::atomic<int64_t> polls{0};   // idle spells begun by polling the queue
  std::atomic<int64_t> caught{0};  // of them, ended by work while polling
};

}  // namespace conclave
