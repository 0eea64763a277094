// CommitBatcher: group commit for the service loop (the SQL half is store/transaction). The
// first write of a loop turn opens one transaction and posts a flush behind the work already
// queued, so every write made before the flush commits together; each later write runs inside
// its own savepoint so a failing request rolls back alone (a failing first write takes the
// whole transaction, which holds nothing else, back with it). Acknowledgements, event
// publication and side effects (spawning a worker) run only after COMMIT succeeded — nothing is
// acknowledged before it is durable.
// When a commit fails the batcher changes mode (STYLE "stop writing"):
//   disk full (SQLITE_FULL: rolled back, the outcome is known) — every write is refused with
//     RESOURCE_EXHAUSTED naming the cause; a probe tries a small write every probe interval
//     and, once one lands, writing resumes by itself and the callbacks queued with
//     WhenWritable (the completion writes that could not be made) run;
//   broken (any other COMMIT error: the outcome is unknown) — every later write is refused with
//     UNAVAILABLE naming the cause, until conclaved restarts.
// Thread-safety: loop thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "domain/message.h"
#include "store/database.h"
#include "store/transaction.h"

namespace conclave::service {

class CommitBatcher {
 public:
  enum class Mode { kWriting, kDiskFull, kBroken };
  using Publisher = std::function<void(const std::vector<domain::MessageRecord>&)>;

  CommitBatcher(boost::asio::io_context& io, store::Database& db, Clock& clock, Publisher publish)
      : io_(io), txn_(db), clock_(clock), publish_(std::move(publish)) {}

  // Runs fn inside the turn's transaction. fn returns a Status; on error (or a StoreError) its
  // changes, its published messages and its after-commit actions are discarded.
  Status Write(const std::function<Status()>& fn);

  // Queues a committed message for the event bus (call inside Write).
  void Publish(const domain::MessageRecord& m) { pending_messages_.push_back(m); }

  // Runs fn(ok) after the current transaction commits (ok=true) or fails (ok=false); runs it
  // at once when no transaction is open (ok = the store takes writes).
  void AfterCommit(std::function<void(bool ok)> fn);

  // Commits now (normally posted automatically). Safe to call with nothing open.
  void Flush();

  // Runs fn once writes land again: at once while writing; after the probe succeeds while the
  // disk is full; never once broken (a restart recovers instead).
  void WhenWritable(std::function<void()> fn);

  // Why a write is refused in the current mode (OK while writing).
  Status Refusal() const;
  Mode mode() const { return mode_; }
  bool broken() const { return mode_ == Mode::kBroken; }
  const std::string& reason() const { return reason_; }
  int64_t commits() const { return commits_; }
  // True while this loop turn's writes wait for their COMMIT.
  bool pending() const { return txn_.open(); }
  // Called whenever the mode changes (health reporting).
  void OnModeChange(std::function<void(Mode)> fn) { on_mode_change_ = std::move(fn); }
  void SetProbeIntervalMs(int64_t ms) { probe_interval_ms_ = ms; }

 private:
  void EnterMode(Mode mode, const std::string& reason);
  void ScheduleProbe();
  void Probe();

  boost::asio::io_context& io_;
  store::Transaction txn_;
  Clock& clock_;
  Publisher publish_;
  Mode mode_ = Mode::kWriting;
  std::string reason_;
  std::vector<domain::MessageRecord> pending_messages_;
  std::vector<std::function<void(bool)>> after_commit_;
  std::vector<std::function<void()>> when_writable_;
  std::shared_ptr<Alarm> probe_;
  std::function<void(Mode)> on_mode_change_;
  int64_t probe_interval_ms_ = 1000;
  int64_t commits_ = 0;
};

}  // namespace conclave::service
