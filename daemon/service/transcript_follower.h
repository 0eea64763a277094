// TranscriptFollower: live transcript streams (the FollowTranscript RPC). A follower is a
// dispatch, a byte cursor and a sink; it is handed the bytes appended to
// STATE_DIR/dispatches/<id>/transcript.log in bounded chunks, one chunk at a time (the sink
// asks for the next with Ready(), so a slow client holds no more than one chunk), and a last
// chunk with eof=true once the dispatch has finished and every byte was delivered. The file is
// already redacted by the worker run, so what a follower sees is what `ReadTranscript` returns.
//
// Entry points for the run supervisor (one-line hooks, no polling):
//   OnAppended(dispatch_id)  output was written to the transcript (the worker's on_output);
//   OnFinished(dispatch_id)  the run ended and its transcript is complete (run completion);
//                            followers get their eof after the current batch commits, so a
//                            client that reads the task next sees the dispatch's final state.
// A dispatch that ends without ever running (cancelled or refused while queued) has no run:
// while a followed dispatch is queued the follower watches its task's events on the bus and
// re-reads the dispatch's state when one commits.
//
// Reads are pread()s of at most max_chunk_bytes (default 64 KiB, at most 1 MiB) on the loop,
// only for dispatches that have followers; nothing is buffered beyond the chunk in flight.
// Thread-safety: loop thread only; sinks are called on the loop. REQUIRES: a sink does not
// call Unfollow() or Follow() synchronously (post them).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "common/status.h"
#include "service/core.h"
#include "service/ports.h"

namespace conclave::service {

class TranscriptFollower : public TranscriptSink {
 public:
  struct Chunk {
    int64_t dispatch_id = 0;
    std::string data;         // redacted transcript bytes (may be empty on the eof chunk)
    int64_t next_cursor = 0;  // byte offset after data: resume from here
    bool eof = false;         // the dispatch finished and data reached the end: last chunk
  };
  using Sink = std::function<void(Chunk)>;
  using FollowerId = uint64_t;

  static constexpr int kDefaultChunkBytes = 64 << 10;
  static constexpr int kMaxChunkBytes = 1 << 20;

  explicit TranscriptFollower(Core& core) : core_(core) {}
  ~TranscriptFollower();
  TranscriptFollower(const TranscriptFollower&) = delete;
  TranscriptFollower& operator=(const TranscriptFollower&) = delete;

  // Starts following. dispatch_id selects the dispatch (handle, when given, must be the
  // terminal it ran on); dispatch_id 0 takes the handle's latest dispatch. The first chunk
  // (bytes already written from cursor on, or the eof of a finished dispatch) is delivered
  // before this returns when there is one. Errors name the field (INVALID_ARGUMENT, NOT_FOUND).
  StatusOr<FollowerId> Follow(const std::string& handle, int64_t dispatch_id, int64_t cursor,
                              int max_chunk_bytes, Sink sink);
  // The sink has consumed its last chunk: deliver the next one when there is one.
  void Ready(FollowerId id);
  // Drops a follower without calling its sink again (the client went away). Unknown ids are
  // ignored.
  void Unfollow(FollowerId id);

  void OnAppended(int64_t dispatch_id) override;
  void OnFinished(int64_t dispatch_id) override;

  size_t follower_count() const { return followers_.size(); }

 private:
  struct Follower {
    int64_t dispatch_id = 0;
    int64_t cursor = 0;
    int max_chunk = kDefaultChunkBytes;
    bool finished = false;   // the dispatch has ended: its transcript is complete
    bool in_flight = false;  // a chunk was handed to the sink and not yet acknowledged
    int fd = -1;             // transcript file, opened when it first exists
    Sink sink;
  };

  void Pump(FollowerId id);
  void Remove(FollowerId id);
  void MarkFinished(int64_t dispatch_id);
  // Watches the task's events while the dispatch is queued (no run to call OnFinished).
  void WatchQueued(int64_t dispatch_id, int64_t task_id);
  void StopWatchingQueued(int64_t dispatch_id);
  std::string ReadChunk(Follower& f);
  std::string TranscriptPath(int64_t dispatch_id) const;

  Core& core_;
  FollowerId next_id_ = 1;
  std::map<FollowerId, Follower> followers_;
  std::map<int64_t, std::set<FollowerId>> by_dispatch_;
  std::map<int64_t, uint64_t> queued_watchers_;  // dispatch id → event bus watcher id
};

}  // namespace conclave::service
