#include "service/commit_batcher.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

namespace conclave::service {

Status CommitBatcher::Refusal() const {
  switch (mode_) {
    case Mode::kWriting:
      return Status::Ok();
    case Mode::kDiskFull:
      return ResourceExhausted("store: the disk is full (" + reason_ +
                               "); writes are refused until space is freed, then resume by "
                               "themselves");
    case Mode::kBroken:
      return Unavailable("store: refusing writes after a failed commit whose outcome is unknown (" +
                         reason_ + "); fix the disk or database, then restart conclaved");
  }
  return Status::Ok();
}

Status CommitBatcher::Write(const std::function<Status()>& fn) {
  if (mode_ != Mode::kWriting) return Refusal();
  // The turn's first write needs no savepoint of its own: should it fail, the transaction holds
  // nothing else, and rolling all of it back undoes that write alone. SAVEPOINT and RELEASE
  // cost ~3-4k instructions a write, and with one client every Send is the first of its turn.
  bool first = false;
  try {
    if (!txn_.open()) {
      txn_.Begin();
      first = true;
      boost::asio::post(io_, [this] { Flush(); });
    } else {
      txn_.OpenSavepoint();
    }
  } catch (const store::StoreError& e) {
    return Unavailable(std::string("store: ") + e.what());
  }
  size_t messages_mark = pending_messages_.size();
  size_t actions_mark = after_commit_.size();
  Status result;
  try {
    result = fn();
  } catch (const store::StoreError& e) {
    if (store::IsDiskFull(e)) {
      EnterMode(Mode::kDiskFull, e.what());
      result = Refusal();
    } else {
      result = Internal(std::string("store: ") + e.what());
    }
  } catch (const std::exception& e) {
    result = Internal(std::string("internal error: ") + e.what());
  }
  try {
    if (result.ok()) {
      if (!first) {
        txn_.ReleaseSavepoint();
      } else if (!txn_.active()) {
        // SQLite rolled the transaction back by itself under fn (an I/O error caught and
        // swallowed): what fn ran after that committed on its own, outside the batch. As a
        // failed RELEASE would for a later write, this stops the batch.
        throw store::StoreError(SQLITE_ABORT, "the transaction was rolled back under a write");
      }
    } else {
      pending_messages_.resize(messages_mark);
      after_commit_.resize(actions_mark);
      if (first) {
        txn_.Rollback();  // a flush posted for it finds nothing open, or the next write's
      } else {
        txn_.RollbackSavepoint();
      }
    }
  } catch (const store::StoreError& e) {
    // This request's changes may still be in the transaction: nothing of the batch commits
    // (Flush abandons it), and nothing of this request is published or acted on.
    pending_messages_.resize(messages_mark);
    after_commit_.resize(actions_mark);
    EnterMode(Mode::kBroken, e.what());
    return Refusal();
  }
  return result;
}

void CommitBatcher::AfterCommit(std::function<void(bool)> fn) {
  if (!txn_.open()) {
    fn(mode_ == Mode::kWriting);
    return;
  }
  after_commit_.push_back(std::move(fn));
}

void CommitBatcher::WhenWritable(std::function<void()> fn) {
  if (mode_ == Mode::kBroken) return;
  if (mode_ == Mode::kWriting) return fn();
  when_writable_.push_back(std::move(fn));
}

void CommitBatcher::Flush() {
  if (txn_.open()) {
    store::CommitResult r;
    bool abandoned = mode_ == Mode::kBroken;
    if (abandoned) {
      // A write could not be released or rolled back: what the batch holds is not known.
      txn_.Abandon();
      r.outcome = store::CommitOutcome::kUnknown;
      r.error = reason_;
      spdlog::critical("a write could not be kept or undone; the batch is rolled back, refusing "
                       "further writes: {}",
                       r.error);
    } else {
      r = txn_.Commit();
    }
    if (r.ok()) {
      ++commits_;
    } else if (abandoned) {
      // already broken
    } else if (r.outcome == store::CommitOutcome::kFull) {
      spdlog::error("COMMIT failed, the disk is full; refusing writes until space returns: {}",
                    r.error);
      EnterMode(Mode::kDiskFull, r.error);
    } else {
      spdlog::critical("COMMIT failed with an unknown outcome, refusing further writes: {}",
                       r.error);
      EnterMode(Mode::kBroken, r.error);
    }
    bool ok = r.ok();
    auto messages = std::move(pending_messages_);
    auto actions = std::move(after_commit_);
    pending_messages_.clear();
    after_commit_.clear();
    try {
      if (ok && !messages.empty()) publish_(messages);
    } catch (const std::exception& e) {
      spdlog::error("publishing committed events failed: {}", e.what());
    }
    for (auto& a : actions) {
      try {
        a(ok);
      } catch (const std::exception& e) {
        spdlog::error("after-commit action failed: {}", e.what());
      }
    }
  }
  if (mode_ == Mode::kWriting && !when_writable_.empty()) {
    auto ready = std::move(when_writable_);
    when_writable_.clear();
    for (auto& fn : ready) fn();
  }
}

void CommitBatcher::EnterMode(Mode mode, const std::string& reason) {
  if (mode_ == mode || mode_ == Mode::kBroken) return;  // broken stays broken
  mode_ = mode;
  reason_ = reason;
  if (mode == Mode::kDiskFull) ScheduleProbe();
  if (mode == Mode::kWriting) probe_.reset();
  if (on_mode_change_) on_mode_change_(mode);
}

void CommitBatcher::ScheduleProbe() {
  probe_ = clock_.After(probe_interval_ms_, [this] { Probe(); });
}

void CommitBatcher::Probe() {
  if (mode_ != Mode::kDiskFull) return;
  std::string error;
  if (txn_.open() || !txn_.ProbeWritable(&error)) {
    ScheduleProbe();
    return;
  }
  spdlog::info("the store takes writes again; resuming");
  EnterMode(Mode::kWriting, "");
  Flush();  // runs the writes that waited
}

}  // namespace conclave::service
