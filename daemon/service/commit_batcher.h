// CommitBatcher: group commit for the service loop. The first write of a loop turn opens one
// transaction (BEGIN IMMEDIATE) and posts a flush behind the work already queued, so every
// write made before the flush runs commits together. Each write runs inside its own SAVEPOINT
// so a failing request rolls back alone. Acknowledgements, event publication and side effects
// (spawning a worker) run only after COMMIT succeeded — nothing is acknowledged before it is
// durable. After a failed COMMIT the batcher refuses all later writes (the store's outcome is
// unknown; see STYLE "stop writing").
// Thread-safety: loop thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <string>
#include <vector>

#include "common/health_reporter.h"
#include "common/status.h"
#include "domain/message.h"
#include "store/database.h"

namespace conclave::service {

class CommitBatcher {
 public:
  using Publisher = std::function<void(const std::vector<domain::MessageRecord>&)>;

  CommitBatcher(boost::asio::io_context& io, store::Database& db, Publisher publish)
      : io_(io), db_(db), publish_(std::move(publish)) {}

  // Runs fn inside the turn's transaction. fn returns a Status; on error (or StoreError) its
  // changes, its published messages and its after-commit actions are discarded.
  Status Write(const std::function<Status()>& fn);

  // Queues a committed message for the event bus (call inside Write).
  void Publish(const domain::MessageRecord& m) { pending_messages_.push_back(m); }

  // Runs fn(ok) after the current transaction commits (ok=true) or fails (ok=false); runs it
  // at once with ok=true when no transaction is open. Used to acknowledge clients.
  void AfterCommit(std::function<void(bool ok)> fn);

  // Commits now (normally posted automatically). Safe to call with nothing open.
  void Flush();

  // Told (once) when the batcher starts refusing writes, so health checks say NOT_SERVING.
  void set_health_reporter(HealthReporter* reporter) { health_ = reporter; }

  bool broken() const { return !broken_reason_.empty(); }
  const std::string& broken_reason() const { return broken_reason_; }
  int64_t commits() const { return commits_; }

 private:
  boost::asio::io_context& io_;
  store::Database& db_;
  Publisher publish_;
  bool open_ = false;
  std::vector<domain::MessageRecord> pending_messages_;
  std::vector<std::function<void(bool)>> after_commit_;
  std::string broken_reason_;
  int64_t commits_ = 0;
  HealthReporter* health_ = nullptr;

  void MarkBroken(const std::string& reason);
};

}  // namespace conclave::service
