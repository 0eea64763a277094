#include "service/transcript_follower.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/read_file.h"

namespace conclave::service {
namespace {

bool IsLive(domain::DispatchState state) { return !domain::DispatchEnded(state); }

}  // namespace

TranscriptFollower::~TranscriptFollower() {
  for (auto& [id, f] : followers_) {
    if (f.fd >= 0) close(f.fd);
  }
  for (const auto& [dispatch, watcher] : queued_watchers_) core_.bus.RemoveWatcher(watcher);
}

StatusOr<TranscriptFollower::FollowerId> TranscriptFollower::Follow(const std::string& handle,
                                                                    int64_t dispatch_id,
                                                                    int64_t cursor,
                                                                    int max_chunk_bytes,
                                                                    Sink sink) {
  if (cursor < 0) return InvalidArgument("cursor: must not be negative");
  if (dispatch_id < 0) return InvalidArgument("dispatch_id: must not be negative");
  if (max_chunk_bytes < 0) return InvalidArgument("max_chunk_bytes: must not be negative");
  if (handle.empty() && dispatch_id == 0) {
    return InvalidArgument("handle: give a terminal handle, a dispatch_id, or both");
  }
  std::optional<domain::Dispatch> d;
  if (dispatch_id) {
    d = core_.dispatches.Get(dispatch_id);
    if (!d) {
      return NotFound("dispatch_id: dispatch " + std::to_string(dispatch_id) + " does not exist");
    }
    if (!handle.empty() && d->terminal != handle) {
      return NotFound("dispatch_id: dispatch " + std::to_string(dispatch_id) + " did not run on " +
                      handle);
    }
  } else {
    if (!core_.terminals.Get(handle)) return NotFound("handle: no terminal named '" + handle + "'");
    d = core_.dispatches.LatestForTerminal(handle);
    if (!d) return NotFound("handle: terminal '" + handle + "' has run no dispatch yet");
  }

  FollowerId id = next_id_++;
  Follower f;
  f.dispatch_id = d->id;
  f.cursor = cursor;
  f.max_chunk =
      max_chunk_bytes == 0 ? kDefaultChunkBytes : std::min(max_chunk_bytes, kMaxChunkBytes);
  f.finished = !IsLive(d->state);
  f.sink = std::move(sink);
  followers_.emplace(id, std::move(f));
  by_dispatch_[d->id].insert(id);
  if (d->state == domain::DispatchState::kQueued) WatchQueued(d->id, d->task_id);
  Pump(id);
  return id;
}

void TranscriptFollower::Ready(FollowerId id) {
  auto it = followers_.find(id);
  if (it == followers_.end()) return;
  it->second.in_flight = false;
  Pump(id);
}

void TranscriptFollower::Unfollow(FollowerId id) { Remove(id); }

void TranscriptFollower::OnAppended(int64_t dispatch_id) {
  auto it = by_dispatch_.find(dispatch_id);
  if (it == by_dispatch_.end()) return;
  // It runs: the run supervisor's hooks cover the rest of its life.
  StopWatchingQueued(dispatch_id);
  std::vector<FollowerId> ids(it->second.begin(), it->second.end());
  for (FollowerId id : ids) Pump(id);
}

void TranscriptFollower::OnFinished(int64_t dispatch_id) {
  if (!by_dispatch_.count(dispatch_id)) return;
  // The eof goes out once the dispatch's final state is durable.
  core_.batcher.AfterCommit([this, dispatch_id](bool) { MarkFinished(dispatch_id); });
}

void TranscriptFollower::MarkFinished(int64_t dispatch_id) {
  StopWatchingQueued(dispatch_id);
  auto it = by_dispatch_.find(dispatch_id);
  if (it == by_dispatch_.end()) return;
  std::vector<FollowerId> ids(it->second.begin(), it->second.end());
  for (FollowerId id : ids) {
    auto f = followers_.find(id);
    if (f == followers_.end()) continue;
    f->second.finished = true;
    Pump(id);
  }
}

void TranscriptFollower::Pump(FollowerId id) {
  auto it = followers_.find(id);
  if (it == followers_.end()) return;
  Follower& f = it->second;
  if (f.in_flight) return;
  bool finished = f.finished;  // read before the bytes: a complete file, read to its end
  std::string data = ReadChunk(f);
  if (data.empty() && !finished) return;  // nothing new yet: OnAppended / OnFinished wake us
  Chunk c;
  c.dispatch_id = f.dispatch_id;
  c.next_cursor = f.cursor + static_cast<int64_t>(data.size());
  c.eof = finished && static_cast<int>(data.size()) < f.max_chunk;
  c.data = std::move(data);
  f.cursor = c.next_cursor;
  if (c.eof) {
    Sink sink = std::move(f.sink);
    Remove(id);
    sink(std::move(c));
    return;
  }
  f.in_flight = true;
  f.sink(std::move(c));
}

std::string TranscriptFollower::ReadChunk(Follower& f) {
  if (f.fd < 0) {
    // Only the regular file the daemon writes: a FIFO put in its place never stalls the loop.
    f.fd = OpenRegularFile(TranscriptPath(f.dispatch_id).c_str(), O_NOFOLLOW);
    if (f.fd < 0) return "";  // not written yet (queued, or spawning)
  }
  std::string buf(static_cast<size_t>(f.max_chunk), '\0');
  ssize_t n;
  do {
    n = pread(f.fd, buf.data(), buf.size(), f.cursor);
  } while (n < 0 && errno == EINTR);
  buf.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return buf;
}

void TranscriptFollower::Remove(FollowerId id) {
  auto it = followers_.find(id);
  if (it == followers_.end()) return;
  int64_t dispatch_id = it->second.dispatch_id;
  if (it->second.fd >= 0) close(it->second.fd);
  followers_.erase(it);
  auto d = by_dispatch_.find(dispatch_id);
  if (d == by_dispatch_.end()) return;
  d->second.erase(id);
  if (d->second.empty()) {
    by_dispatch_.erase(d);
    StopWatchingQueued(dispatch_id);
  }
}

void TranscriptFollower::WatchQueued(int64_t dispatch_id, int64_t task_id) {
  if (queued_watchers_.count(dispatch_id)) return;
  domain::MessageFilter filter;
  filter.task_ids = {task_id};
  uint64_t watcher = core_.bus.AddWatcher(filter, core_.bus.last_seq(),
                                          [this, dispatch_id](const domain::MessageRecord&) {
                                            auto w = queued_watchers_.find(dispatch_id);
                                            if (w == queued_watchers_.end()) return false;
                                            std::optional<domain::Dispatch> d;
                                            try {
                                              d = core_.dispatches.Get(dispatch_id);
                                            } catch (const std::exception&) {
                                              return true;  // try again on the task's next event
                                            }
                                            if (d && d->state == domain::DispatchState::kQueued) return true;
                                            // It started (the run's hooks take over) or ended
                                            // without running. Returning false unsubscribes: the
                                            // bus erases the watcher itself, so forget it before
                                            // anything else.
                                            queued_watchers_.erase(w);
                                            if (!d || !IsLive(d->state)) MarkFinished(dispatch_id);
                                            return false;
                                          });
  queued_watchers_[dispatch_id] = watcher;
}

void TranscriptFollower::StopWatchingQueued(int64_t dispatch_id) {
  auto w = queued_watchers_.find(dispatch_id);
  if (w == queued_watchers_.end()) return;
  uint64_t watcher = w->second;
  queued_watchers_.erase(w);
  core_.bus.RemoveWatcher(watcher);
}

std::string TranscriptFollower::TranscriptPath(int64_t dispatch_id) const {
  return core_.DispatchDir(dispatch_id) + "/transcript.log";
}

}  // namespace conclave::service
