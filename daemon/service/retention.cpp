#include "service/retention.h"
#include "common/loop_kick.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <filesystem>
#include <spdlog/spdlog.h>
#include <system_error>

namespace conclave::service {
namespace {

constexpr int kDispatchBatch = 10000;  // dispatch rows looked at per pass

int64_t DaysMs(double days) { return static_cast<int64_t>(days * 86400.0 * 1000.0); }

// Sizes under state_dir (files only; symlinks not followed) and the free space there.
DiskView Measure(const std::string& state_dir, const std::string& database_path) {
  namespace fs = std::filesystem;
  DiskView v;
  std::error_code ec;
  const std::string dispatches = state_dir + "/dispatches/";
  for (auto it = fs::recursive_directory_iterator(
           state_dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    auto size = static_cast<int64_t>(it->file_size(ec));
    if (ec) {
      ec.clear();
      continue;
    }
    v.state_bytes += size;
    std::string p = it->path().string();
    if (p.rfind(dispatches, 0) == 0) v.dispatch_bytes += size;
    if (p.rfind(database_path, 0) == 0) v.database_bytes += size;  // .db, -wal, -shm
  }
  struct statvfs fs_info {};
  if (statvfs(state_dir.c_str(), &fs_info) == 0) {
    v.free_bytes = static_cast<int64_t>(fs_info.f_bavail) * static_cast<int64_t>(fs_info.f_frsize);
  }
  return v;
}

}  // namespace

int NextDeleteBatch(int batch, std::chrono::microseconds took) {
  if (took < kDeleteBudget / 2) batch *= 2;
  else if (took > kDeleteBudget) batch /= 2;
  return std::clamp(batch, kMinDeleteBatch, kMaxDeleteBatch);
}

std::chrono::microseconds PauseAfterDelete(std::chrono::microseconds took, bool requests_came) {
  return requests_came ? std::max(2 * took, kQuietPause) : kQuietPause;
}

void Retention::Start() {
  RunPass([this] {
    if (stopped_) return;
    next_ = core_.clock.After(int64_t{core_.config.retention.interval_s} * 1000, [this] { Start(); });
  });
}

void Retention::Stop() {
  stopped_ = true;
  next_.reset();
  pause_.cancel();
}

void Retention::RunPass(std::function<void()> done) {
  if (running_) {
    // A pass asked for while one runs is a fresh pass after it (it sees the time now).
    again_.push_back(std::move(done));
    return;
  }
  running_ = true;
  requests_before_ = -1;  // requests heard between passes say nothing of this one's deletes
  const auto& r = core_.config.retention;
  const int64_t now = core_.clock.NowMs();
  int64_t last = core_.messages.LastSeq();
  int64_t heartbeat_upto = 0, read_upto = 0;
  try {
    if (r.heartbeat_days > 0) heartbeat_upto = store_.LastSeqBefore(now - DaysMs(r.heartbeat_days), last);
    if (r.read_message_days > 0) {
      read_upto = store_.LastSeqBefore(now - DaysMs(r.read_message_days), last);
    }
  } catch (const std::exception& e) {
    spdlog::warn("retention: reading the message log failed: {}", e.what());
  }
  if (flows_ && r.flow_days > 0) flows_->CleanEndedBefore(now - DaysMs(r.flow_days));
  // Dispatch directories, oldest first; a dispatch still running (or too young) stops the
  // sweep there until the next pass.
  std::vector<int64_t> dirs;
  if (r.dispatch_days > 0) {
    const int64_t cutoff = now - DaysMs(r.dispatch_days);
    try {
      for (const auto& d : store_.DispatchesAfter(swept_dispatch_id_, kDispatchBatch)) {
        if (d.finished_ms <= 0 || d.finished_ms >= cutoff) break;
        dirs.push_back(d.id);
        swept_dispatch_id_ = d.id;
      }
    } catch (const std::exception& e) {
      spdlog::warn("retention: reading dispatches failed: {}", e.what());
    }
  }
  DeleteMessages(heartbeat_upto, read_upto, 0, kFirstDeleteBatch,
                 [this, dirs = std::move(dirs), done]() mutable {
    OffLoop(std::move(dirs), [this, done] {
      running_ = false;
      if (done) done();
      if (again_.empty()) return;
      auto waiting = std::move(again_);
      again_.clear();
      RunPass([waiting = std::move(waiting)] {
        for (const auto& w : waiting) {
          if (w) w();
        }
      });
    });
  });
}

void Retention::DeleteMessages(int64_t heartbeat_upto, int64_t read_upto, int64_t after_seq,
                               int batch, std::function<void()> then) {
  if (heartbeat_upto <= 0 && read_upto <= 0) return then();
  store::RetentionStore::Deleted deleted;
  auto t0 = std::chrono::steady_clock::now();
  const bool alone = !core_.batcher.pending();
  Status s = core_.batcher.Write([&]() -> Status {
    const auto deadline = t0 + budget_;
    deleted = store_.DeleteMessages(heartbeat_upto, read_upto, after_seq, batch, [deadline] {
      return std::chrono::steady_clock::now() >= deadline;
    });
    return Status::Ok();
  });
  // When this delete opened the transaction, its COMMIT now counts in how long it held the
  // loop; other requests' writes (and what follows their commit) keep their own turn.
  if (alone) core_.batcher.Flush();
  auto took = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - t0);
  if (!s.ok()) {
    // A full disk refuses even deletes' journal: try again next pass.
    spdlog::warn("retention: deleting old messages failed: {}", s.message());
    return then();
  }
  disk_.removed_messages += deleted.count;
  if (!deleted.cut && deleted.count < batch) return then();
  // More to go, from where this one stopped.
  int next = NextDeleteBatch(batch, took);
  const int64_t heard = requests_ ? requests_() : -1;
  pause_.expires_after(PauseAfterDelete(took, heard < 0 || heard != requests_before_));
  requests_before_ = heard;
  pause_.async_wait([this, heartbeat_upto, read_upto, from = deleted.last_seq, next,
                     then = std::move(then)](const boost::system::error_code& ec) mutable {
    if (ec || stopped_) return;  // the daemon is going away
    DeleteMessages(heartbeat_upto, read_upto, from, next, std::move(then));
  });
}

void Retention::OffLoop(std::vector<int64_t> dirs, std::function<void()> done) {
  std::vector<std::string> paths;
  for (int64_t id : dirs) paths.push_back(core_.DispatchDir(id));
  std::string state_dir = core_.config.state_dir, db = core_.config.database_path;
  // The pool job reaches the loop through io alone (never through this, which may be gone).
  boost::asio::io_context* io = &core_.io;
  auto back = [this, done = std::move(done)](int64_t removed, DiskView measured) {
    int64_t dirs_so_far = disk_.removed_dispatch_dirs + removed;
    int64_t messages_so_far = disk_.removed_messages;
    disk_ = measured;
    disk_.measured_ms = core_.clock.NowMs();
    disk_.removed_dispatch_dirs = dirs_so_far;
    disk_.removed_messages = messages_so_far;
    done();
  };
  boost::asio::post(core_.helpers, [io, paths = std::move(paths), state_dir, db,
                                    back = std::move(back)]() mutable {
    int64_t removed = 0;
    for (const auto& p : paths) {
      std::error_code ec;
      removed += std::filesystem::remove_all(p, ec) > 0 ? 1 : 0;
    }
    DiskView measured = Measure(state_dir, db);
    PostToLoop(*io, [removed, measured, back = std::move(back)]() mutable {
      back(removed, measured);
    });
  });
}

}  // namespace conclave::service
