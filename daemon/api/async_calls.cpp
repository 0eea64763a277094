#include "api/async_calls.h"

#include <pthread.h>

#include "common/runtime.h"
#include "common/thread_name.h"

namespace conclave::api {

void CallQueue::Start(std::vector<std::function<void()>> first_calls, bool polled) {
  polled_ = polled;
  for (auto& request : first_calls) request();
  if (polled_) return;
  thread_ = std::thread([this] { Run(); });
  NameThread(thread_, "grpc-queue");  // as top -H and /proc show it
}

void CallQueue::Run() {
  EndBackgroundThreads();  // SCHED_OTHER: a request is read at once (common/runtime.h)
  void* tag = nullptr;
  bool ok = false;
  while (cq_->Next(&tag, &ok)) Deliver(tag, ok);
}

CallQueue::Polled CallQueue::Deliver(void* tag, bool ok) {
  if (tag == &wake_) {
    kick_set_.store(false);
    return Polled::kWake;
  }
  auto* t = static_cast<CallTag*>(tag);
  if (t->op == CallOp::kRequest && ok) {
    requests_.store(requests_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (count_callers_) callers_.Heard(t->call->context()->peer());
  }
  t->call->Proceed(t->op, ok);
  return Polled::kCall;
}

bool CallQueue::ClaimPolling() {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_.load()) return false;
  loop_polls_ = true;
  return true;
}

CallQueue::Polled CallQueue::Poll(gpr_timespec deadline) {
  void* tag = nullptr;
  bool ok = false;
  switch (cq_->AsyncNext(&tag, &ok, deadline)) {
    case grpc::CompletionQueue::SHUTDOWN:
      return Polled::kShutdown;
    case grpc::CompletionQueue::TIMEOUT:
      return Polled::kTimeout;
    case grpc::CompletionQueue::GOT_EVENT:
      break;
  }
  return Deliver(tag, ok);
}

void CallQueue::Kick() {
  if (kick_set_.load()) return;  // a wake is on its way
  std::lock_guard<std::mutex> lock(kick_mu_);
  if (kick_set_.load() || kicks_closed_ || !polled_) return;
  kick_set_.store(true);
  // Held until Set returns: the next Set, after this wake's delivery, waits for it.
  wake_.Set(cq_.get(), gpr_time_0(GPR_CLOCK_MONOTONIC), &wake_);
}

void CallQueue::Track(int delta) {
  std::lock_guard<std::mutex> lock(mu_);
  live_ += delta;
  if (live_ == 0) all_ended_.notify_all();
}

void CallQueue::Stop() {
  bool self_polls = false;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_.exchange(true)) return;
    self_polls = polled_ && !loop_polls_;
    // The server has shut down: every requested call comes back with ok false; a started one
    // ends once its reactor finished it (a cancelled Wait, from the loop). No op may start on
    // the queue after its Shutdown, so that waits for the last call to be deleted.
    if (thread_.joinable() || (polled_ && loop_polls_)) {
      all_ended_.wait(lock, [this] { return live_ == 0; });
    }
  }
  if (self_polls) {
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (live_ == 0) break;
      }
      Poll(gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(100, GPR_TIMESPAN)));
    }
  }
  {
    std::lock_guard<std::mutex> lock(kick_mu_);
    kicks_closed_ = true;
  }
  cq_->Shutdown();
  if (thread_.joinable()) thread_.join();
  if (self_polls) {
    while (Poll(gpr_inf_future(GPR_CLOCK_MONOTONIC)) != Polled::kShutdown) {
    }
  }
}

}  // namespace conclave::api
