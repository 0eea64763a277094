#include "service/commit_batcher.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

namespace conclave::service {

Status CommitBatcher::Write(const std::function<Status()>& fn) {
  if (broken()) {
    return Unavailable("the store is refusing writes after a failed commit (" + broken_reason_ +
                       "); free disk space or fix the database, then restart conclaved");
  }
  try {
    if (!open_) {
      db_.Exec("BEGIN IMMEDIATE");
      open_ = true;
      boost::asio::post(io_, [this] { Flush(); });
    }
    db_.Exec("SAVEPOINT op");
  } catch (const store::StoreError& e) {
    return Unavailable(std::string("store: ") + e.what());
  }
  size_t messages_mark = pending_messages_.size();
  size_t actions_mark = after_commit_.size();
  Status result;
  try {
    result = fn();
  } catch (const store::StoreError& e) {
    result = Internal(std::string("store: ") + e.what());
  } catch (const std::exception& e) {
    result = Internal(std::string("internal error: ") + e.what());
  }
  try {
    if (result.ok()) {
      db_.Exec("RELEASE op");
    } else {
      db_.Exec("ROLLBACK TO op");
      db_.Exec("RELEASE op");
      pending_messages_.resize(messages_mark);
      after_commit_.resize(actions_mark);
    }
  } catch (const store::StoreError& e) {
    MarkBroken(e.what());
    spdlog::critical("store savepoint failed: {}", e.what());
    return Unavailable(std::string("store: ") + e.what());
  }
  return result;
}

void CommitBatcher::AfterCommit(std::function<void(bool)> fn) {
  if (!open_) {
    fn(!broken());
    return;
  }
  after_commit_.push_back(std::move(fn));
}

void CommitBatcher::Flush() {
  if (!open_) return;
  bool ok = true;
  try {
    db_.Exec("COMMIT");
    ++commits_;
  } catch (const store::StoreError& e) {
    ok = false;
    MarkBroken(e.what());
    spdlog::critical("COMMIT failed, refusing further writes: {}", e.what());
    try { db_.Exec("ROLLBACK"); } catch (const store::StoreError&) {}
  }
  open_ = false;
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

void CommitBatcher::MarkBroken(const std::string& reason) {
  bool first = broken_reason_.empty();
  broken_reason_ = reason.empty() ? "unknown store error" : reason;
  if (first && health_) health_->ReportNotServing("the store refuses writes: " + broken_reason_);
}

}  // namespace conclave::service
