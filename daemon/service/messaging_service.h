// MessagingService: handles, Send / Check / Reply / Inbox, and the event-driven Wait / Watch.
// Loop thread only. Results are delivered through callbacks after the batch that produced
// them has committed, so a client never sees something that could still be lost.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "service/core.h"

namespace conclave::service {

struct SendInput {
  std::string to;  // handle or group address; may be empty for a worker's own worker_done
  domain::MessageRecord message;
  std::string dispatch_token;
};

struct SendResult {
  std::vector<domain::MessageRecord> messages;
  std::string thread_id;
};

struct WaitInput {
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
  std::vector<Core::Liveness> liveness;
};

template <typename T>
using Done = std::function<void(StatusOr<T>)>;

class MessagingService {
 public:
  explicit MessagingService(Core& core) : core_(core) {}

  // Creates the built-in "coordinator" handle if missing (startup).
  void EnsureBuiltinHandles();

  void RegisterHandle(const std::string& name, Done<store::HandleRecord> done);
  std::vector<store::HandleRecord> ListHandles();
  void Send(SendInput in, Done<SendResult> done);
  void Check(const std::string& handle, const std::vector<std::string>& types, bool peek,
             int limit, Done<std::vector<domain::MessageRecord>> done);
  void Reply(int64_t seq, const std::string& from, domain::MessageRecord reply,
             Done<SendResult> done);
  StatusOr<std::vector<domain::MessageRecord>> Inbox(const domain::MessageFilter& filter,
                                                      int limit);
  // Completes done at once when something matches, else when a match commits or at timeout.
  // Returns a waiter id for CancelWait (0 when already completed).
  uint64_t Wait(const WaitInput& in, Done<WaitResult> done);
  void CancelWait(uint64_t id) { core_.bus.CancelWaiter(id); }

  // Resolves an address to recipient handles (NOT_FOUND for unknown/empty, never dropped).
  StatusOr<std::vector<std::string>> ResolveAddress(const std::string& address,
                                                    const std::string& sender);

 private:
  Status ValidateFilter(const domain::MessageFilter& f);
  Core& core_;
};

// Runs fn as a write and calls done with its value after the commit.
template <typename T>
void WriteThen(Core& core, const std::function<StatusOr<T>()>& fn, Done<T> done) {
  std::optional<T> value;
  Status s = core.batcher.Write([&]() -> Status {
    StatusOr<T> r = fn();
    if (!r.ok()) return r.status();
    value = std::move(r.value());
    return Status::Ok();
  });
  if (!s.ok()) {
    done(s);
    return;
  }
  core.batcher.AfterCommit([v = std::move(*value), done = std::move(done), &core](bool ok) mutable {
    if (!ok) {
      done(Unavailable("the change could not be committed: " + core.batcher.broken_reason()));
    } else {
      done(std::move(v));
    }
  });
}

}  // namespace conclave::service
