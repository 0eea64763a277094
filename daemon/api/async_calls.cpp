#include "api/async_calls.h"

#include <pthread.h>

#include "common/runtime.h"
#include "common/thread_name.h"

namespace conclave::api {

void CallQueue::Start(std::vector<std::function<void()>> first_calls) {
  for (auto& request : first_calls) request();
  thread_ = std::thread([this] { Run(); });
  NameThread(thread_, "grpc-queue");  // as top -H and /proc show it
}

void CallQueue::Run() {
  EndBackgroundThreads();  // SCHED_OTHER: a request is read at once (common/runtime.h)
  void* tag = nullptr;
  bool ok = false;
  while (cq_->Next(&tag, &ok)) {
    auto* t = static_cast<CallTag*>(tag);
    t->call->Proceed(t->op, ok);
  }
}

void CallQueue::Track(int delta) {
  std::lock_guard<std::mutex> lock(mu_);
  live_ += delta;
  if (live_ == 0) all_ended_.notify_all();
}

void CallQueue::Stop() {
  if (stopping_.exchange(true)) return;
  // The server has shut down: every requested call comes back with ok false; a started one
  // ends once its reactor finished it (a cancelled Wait, from the loop). No op may start on
  // the queue after its Shutdown, so that waits for the last call to be deleted.
  if (thread_.joinable()) {
    std::unique_lock<std::mutex> lock(mu_);
    all_ended_.wait(lock, [this] { return live_ == 0; });
  }
  cq_->Shutdown();
  if (thread_.joinable()) thread_.join();
}

}  // namespace conclave::api
