// MessagingService: handles, Send / Check / Reply / Inbox, and the event-driven Wait / Watch.
// Loop thread only. Results are delivered through callbacks after the batch that produced
// them has committed, so a client never sees something that could still be lost.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "service/core.h"
#include "service/ports.h"
#include "service/write_then.h"

namespace conclave::service {

struct SendInput {
  std::string to;  // handle or group address; may be empty for a worker's own worker_done
  domain::MessageRecord message;
  std::string dispatch_token;
  domain::Caller caller;  // who asked (the api fills it from the kernel's word)
};

struct SendResult {
  std::vector<domain::MessageRecord> messages;
  std::string thread_id;
};

struct WaitInput {
  domain::Caller caller;
  domain::MessageFilter filter;
  int64_t after_seq = 0;
  bool from_now = false;
  int64_t timeout_ms = 0;
  int limit = 100;
};

struct WaitResult {
  std::vector<domain::MessageRecord> messages;
  int64_t cursor = 0;
  bool timed_out = false;
  std::vector<Liveness> liveness;
};

class MessagingService {
 public:
  explicit MessagingService(Core& core) : core_(core) {}
  void Connect(WorkerReportCheck* reports, RunControl* runs, RefusalLog* refusals) {
    reports_ = reports;
    runs_ = runs;
    refusals_ = refusals;
  }

  // Creates the built-in "coordinator" handle if missing (startup).
  void EnsureBuiltinHandles();

  void RegisterHandle(const std::string& name, Done<store::HandleRecord> done);
  std::vector<store::HandleRecord> ListHandles();
  void Send(SendInput in, Done<SendResult> done);
  void Check(const domain::Caller& caller, const std::string& handle,
             const std::vector<std::string>& types, bool peek, int limit,
             Done<std::vector<domain::MessageRecord>> done);
  void Reply(const domain::Caller& caller, int64_t seq, const std::string& from,
             domain::MessageRecord reply, Done<SendResult> done);
  StatusOr<std::vector<domain::MessageRecord>> Inbox(const domain::Caller& caller,
                                                      domain::MessageFilter filter, int limit);
  // Completes done at once when something committed matches, else when a match commits or at
  // timeout.
  // Returns a waiter id for CancelWait (0 when already completed).
  uint64_t Wait(const WaitInput& in, Done<WaitResult> done);
  void CancelWait(uint64_t id) { core_.bus.CancelWaiter(id); }

  // Watch: the committed backlog after a cursor, a page at a time, then live delivery of every
  // matching message (the callback returns false to stop). Read the last page and subscribe in
  // the same loop turn and nothing falls in between.
  StatusOr<std::vector<domain::MessageRecord>> Backlog(const domain::MessageFilter& filter,
                                                       int64_t after_seq, int limit);
  uint64_t Subscribe(const domain::MessageFilter& filter, int64_t after_seq,
                     events::EventBus::WatchCallback cb) {
    return core_.bus.AddWatcher(filter, after_seq, std::move(cb));
  }
  void Unsubscribe(uint64_t id) { core_.bus.RemoveWatcher(id); }
  // The highest committed sequence number: a cursor that misses nothing after it.
  int64_t LastSeq() const { return core_.bus.last_seq(); }
  // For a read's reply: runs fn(ok) once what this loop turn wrote has committed (reads answer
  // after it, so no client sees a write that could still roll back). With nothing waiting to
  // commit, what the read saw is committed: ok, whether or not the store takes writes (a full
  // disk must not hide the status that reports it).
  void AfterCommit(std::function<void(bool)> fn) {
    if (!core_.batcher.pending()) return fn(true);
    core_.batcher.AfterCommit(std::move(fn));
  }

  // Resolves an address to recipient handles (NOT_FOUND for unknown/empty, never dropped).
  StatusOr<std::vector<std::string>> ResolveAddress(const std::string& address,
                                                    const std::string& sender);

 private:
  Status ValidateFilter(const domain::MessageFilter& f);
  // Up to limit messages matching filter after after_seq that have committed (never one of
  // the batch still open on the loop's connection).
  std::vector<domain::MessageRecord> CommittedAfter(const domain::MessageFilter& filter,
                                                    int64_t after_seq, int limit);
  // Inside a write: a worker's message is bound to its own dispatch (sender = its terminal,
  // recipient = its dispatch's coordinator) or refused; nobody else may send as the daemon.
  Status BindSender(SendInput& in, bool is_reply);
  // A worker reads only what is addressed to its own handle.
  Status BindReader(const domain::Caller& caller, domain::Rpc rpc, std::string& to);
  Core& core_;
  RefusalLog* refusals_ = nullptr;
  WorkerReportCheck* reports_ = nullptr;
  RunControl* runs_ = nullptr;
};

}  // namespace conclave::service
