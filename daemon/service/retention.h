// Retention: what the daemon deletes by itself, and how much disk it uses. A pass runs at
// start and then every retention.interval_s: heartbeats older than heartbeat_days and read
// messages older than read_message_days leave the log (in bounded writes, so other work
// interleaves); the directories of dispatches finished more than dispatch_days ago are
// removed; then the state directory's size and the filesystem's free space are measured.
// Deleting files and measuring run on the helper pool, never on the loop; `conclave status`
// shows the last measurement. 0 days = keep for ever.
// Loop thread only (the pool work touches only paths it was given).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "common/clock.h"
#include "service/core.h"
#include "service/ports.h"
#include "store/retention_store.h"

namespace conclave::service {

struct DiskView {
  int64_t state_bytes = 0;      // everything under the state directory
  int64_t dispatch_bytes = 0;   // of which dispatch directories (transcripts)
  int64_t database_bytes = 0;   // of which the database, its WAL and shared memory
  int64_t free_bytes = 0;       // available to the daemon on the state directory's filesystem
  int64_t measured_ms = 0;      // 0: not measured yet
  int64_t removed_dispatch_dirs = 0, removed_messages = 0;  // since the daemon started
  bool operator==(const DiskView&) const = default;
};

// How many messages the next delete of a pass takes, from how long the last one (its DELETEs
// and its COMMIT) held the loop: the batch doubles while that is under 250 µs and halves above
// 500 µs, within [kMinDeleteBatch, kMaxDeleteBatch]. Each delete also stops at kDeleteBudget
// whatever its batch (a cold page cache, a slow disk): a request that finds one running waits
// for about half a millisecond of it, and for its COMMIT (the longest seen on the test host,
// COMMIT included, 5.4 ms).
constexpr int kFirstDeleteBatch = 256, kMinDeleteBatch = 8, kMaxDeleteBatch = 5000;
constexpr std::chrono::microseconds kDeleteBudget{500};
// How long a pass waits before its next delete. While requests come (any was read since the
// last delete ended), twice as long as the last one took, and never under kQuietPause: a
// backlog then takes at most about a third of the loop, and a client calling back to back finds
// most of its calls between deletes. While none come, kQuietPause: never none, for a timer
// already due is run in the same turn of the loop (api/queue_loop.cpp runs up to 64 handlers
// before it reads gRPC's queue again), so deletes chained without a pause could keep a request
// unread for up to 64 of them (a trial without one read p99s of 11-22 ms).
constexpr std::chrono::microseconds kQuietPause{100};
std::chrono::microseconds PauseAfterDelete(std::chrono::microseconds took, bool requests_came);
int NextDeleteBatch(int batch, std::chrono::microseconds took);

class Retention {
 public:
  explicit Retention(Core& core) : core_(core), store_(core.db), pause_(core.io) {}

  // A pass now, then one every interval.
  void Start();
  void Stop();
  // One pass; done (optional) runs on the loop once it is over. Asked for while a pass runs,
  // it is one more pass after that one.
  void RunPass(std::function<void()> done = nullptr);
  const DiskView& disk() const { return disk_; }
  void Connect(FlowSweeper* flows) { flows_ = flows; }
  // How many requests the API has read so far (api::CallQueue::requests). Without it, every
  // pause is taken as if requests came.
  void HearRequests(std::function<int64_t()> requests) { requests_ = std::move(requests); }
  // Each delete's budget (kDeleteBudget; tests shrink it).
  void SetDeleteBudget(std::chrono::microseconds budget) { budget_ = budget; }

 private:
  void DeleteMessages(int64_t heartbeat_upto, int64_t read_upto, int64_t after_seq, int batch,
                      std::function<void()> then);
  void OffLoop(std::vector<int64_t> dirs, std::function<void()> done);

  Core& core_;
  FlowSweeper* flows_ = nullptr;
  store::RetentionStore store_;
  DiskView disk_;
  int64_t swept_dispatch_id_ = 0;  // every dispatch up to this id was swept
  bool running_ = false, stopped_ = false;
  std::vector<std::function<void()>> again_;  // asked for during a pass: one more after it
  std::shared_ptr<Alarm> next_;
  std::function<int64_t()> requests_;
  std::chrono::microseconds budget_ = kDeleteBudget;
  int64_t requests_before_ = -1;  // requests_() when the last delete ended (-1: not read)
  boost::asio::steady_timer pause_;  // between two deletes of a backlog
};

}  // namespace conclave::service
