// The Conclave API on gRPC's async API, with one completion queue. gRPC's callback API, which
// conclaved used before, runs two "nexting" threads that take turns polling and hand every
// completion to the other: about half the CPU of a call (`bench --only api`). Here one thread
// polls — the loop itself (api/queue_loop.h), or with api_queue_thread the queue's own thread
// (CallQueue::Run) — reads each request, runs its handler, which posts the work to the loop, and
// delivers each completion. Handlers keep the callback API's shape: a unary handler returns a
// UnaryReactor (its call's default one, or one of its own made with the call's context) and
// finishes it from any thread; a server-streaming handler returns a WriteReactor, one write in
// flight at a time. OnCancel, OnWriteDone and OnDone run on the polling thread; OnDone is the
// last call into a reactor (after Finish and the call's end), after which the call's request,
// response and context are gone.
#pragma once

#include <grpcpp/alarm.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "common/loop_kick.h"
#include "common/recent_callers.h"

namespace conclave::api {

enum class CallOp { kRequest, kWrite, kFinish, kDone };

// One call on the completion queue (a unary or a server-streaming one).
class QueuedCall {
 public:
  virtual ~QueuedCall() = default;
  // On the polling thread: the op tagged with it completed.
  virtual void Proceed(CallOp op, bool ok) = 0;
  // The call's server context (its peer names the connection the request came on).
  virtual grpc::ServerContextBase* context() = 0;
};

// What the queue gets back for each op: the call and which of its ops completed.
struct CallTag {
  QueuedCall* call;
  CallOp op;
};

// What a unary reactor finishes through (its call).
class UnaryFinisher {
 public:
  virtual ~UnaryFinisher() = default;
  virtual void FinishUnary(const grpc::Status& s) = 0;
};

class UnaryReactor;

// A call's server context as its handler sees it: gRPC's, plus the call's default reactor.
class CallContext final : public grpc::ServerContext {
 public:
  CallContext(UnaryFinisher* unary, void* stream);
  ~CallContext() override;
  // The reactor that finishes this unary call with its response (the callback API's name).
  UnaryReactor* DefaultReactor() { return default_reactor_.get(); }
  UnaryFinisher* unary() const { return unary_; }
  // The call's WriteStream<T> (server-streaming calls only).
  void* stream() const { return stream_; }

 private:
  UnaryFinisher* unary_;
  void* stream_;
  std::unique_ptr<UnaryReactor> default_reactor_;
};

// A unary call's reactor. Finish once, from any thread.
class UnaryReactor {
 public:
  explicit UnaryReactor(CallContext* ctx) : finisher_(ctx->unary()) {}
  virtual ~UnaryReactor() = default;
  void Finish(const grpc::Status& s) { finisher_->FinishUnary(s); }
  // The client cancelled (or the deadline passed) before the call ended. Finish is still due.
  virtual void OnCancel() {}
  virtual void OnDone() {}

 private:
  UnaryFinisher* finisher_;
};

inline CallContext::CallContext(UnaryFinisher* unary, void* stream)
    : unary_(unary), stream_(stream), default_reactor_(unary ? new UnaryReactor(this) : nullptr) {}
inline CallContext::~CallContext() = default;

// What a write reactor writes through (its call).
template <class T>
class WriteStream {
 public:
  virtual ~WriteStream() = default;
  virtual void StartWrite(const T* msg) = 0;
  virtual void StartWriteAndFinish(const T* msg, grpc::WriteOptions options,
                                   const grpc::Status& s) = 0;
  virtual void Finish(const grpc::Status& s) = 0;
};

// A server-streaming call's reactor: one write in flight at a time (the next after
// OnWriteDone), then Finish (or StartWriteAndFinish) once, from any thread.
template <class T>
class WriteReactor {
 public:
  explicit WriteReactor(CallContext* ctx) : stream_(static_cast<WriteStream<T>*>(ctx->stream())) {}
  virtual ~WriteReactor() = default;
  void StartWrite(const T* msg) { stream_->StartWrite(msg); }
  void StartWriteAndFinish(const T* msg, grpc::WriteOptions options, const grpc::Status& s) {
    stream_->StartWriteAndFinish(msg, options, s);
  }
  void Finish(const grpc::Status& s) { stream_->Finish(s); }
  virtual void OnWriteDone(bool /*ok*/) {}
  virtual void OnCancel() {}
  virtual void OnDone() {}

 private:
  WriteStream<T>* stream_;
};

class CallQueue;

// A unary method: how to ask gRPC for its next call, and its handler.
template <class Req, class Resp>
struct UnaryMethod {
  std::function<void(grpc::ServerContext*, Req*, grpc::ServerAsyncResponseWriter<Resp>*, void*)>
      request;
  std::function<UnaryReactor*(CallContext*, const Req*, Resp*)> handle;
};

// A server-streaming method.
template <class Req, class T>
struct StreamMethod {
  std::function<void(grpc::ServerContext*, Req*, grpc::ServerAsyncWriter<T>*, void*)> request;
  std::function<WriteReactor<T>*(CallContext*, const Req*)> handle;
};

// Owns the completion queue and whoever polls it: its own thread, or the loop (polled, with no
// thread; api/queue_loop.h). Every method keeps one call requested.
class CallQueue final : public LoopKicker {
 public:
  explicit CallQueue(std::unique_ptr<grpc::ServerCompletionQueue> cq) : cq_(std::move(cq)) {}
  ~CallQueue() override { Stop(); }
  grpc::ServerCompletionQueue* cq() const { return cq_.get(); }
  // Requests the first call of every method (methods must outlive the queue) and starts the
  // queue's thread, or with polled none: the loop polls it (ClaimPolling, Poll). After the
  // server is built and started.
  void Start(std::vector<std::function<void()>> first_calls, bool polled = false);
  bool polled() const { return polled_; }
  // After the server has shut down: stops asking for calls, waits until every call has ended
  // (a started call still finishes from the loop, through this queue), then shuts the queue
  // down and joins its thread. Polled, the loop delivers meanwhile, and drains the queue after;
  // if the loop never claimed the queue, Stop polls it itself.
  void Stop();
  // Polled: the loop's claim, once, on its thread; false if Stop came first (it polls then).
  bool ClaimPolling();
  enum class Polled { kCall, kWake, kTimeout, kShutdown };
  // Polled, on the loop's thread: waits until the deadline for one completion and delivers it
  // (kCall); kWake for a Kick; kShutdown once the queue is shut down and empty.
  Polled Poll(gpr_timespec deadline);
  // Polled: wakes Poll, from any thread (LoopKicker). One wake is outstanding at a time; none
  // is set once Stop shuts the queue down.
  void Kick() override;
  // Asks for the next call of a method (no-op once stopping).
  template <class Call, class Method>
  void Next(const Method* m) {
    if (stopping_.load()) return;
    Track(+1);
    (new Call(this, m))->Request();
  }
  // A call was deleted (every call counts from its request to its deletion).
  void Ended() { Track(-1); }
  // From now on, which connection each request comes on is kept (the loop's poll asks; it
  // costs a copy of the peer string a request). On the polling thread.
  void CountCallers() { count_callers_ = true; }
  // Distinct connections the last RecentCallers::kSpan requests came on (0 until counted).
  int recent_callers() const { return callers_.Distinct(); }
  // Requests read so far, of every method (any thread): the retention pass asks whether any
  // came since its last delete ended.
  int64_t requests() const { return requests_.load(std::memory_order_relaxed); }

 private:
  void Run();
  void Track(int delta);
  Polled Deliver(void* tag, bool ok);
  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  bool polled_ = false;
  bool count_callers_ = false;  // polling thread only, as callers_
  RecentCallers callers_;
  std::atomic<int64_t> requests_{0};  // written by the polling thread only
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable all_ended_;
  int live_ = 0;           // under mu_
  bool loop_polls_ = false;  // under mu_: the loop claimed the queue
  // wake_ is set and not yet delivered. Cleared on delivery without kick_mu_: the loop never
  // waits for a kicker (a helper, nicer than it) still returning from Set.
  std::atomic<bool> kick_set_{false};
  std::mutex kick_mu_;         // one Set at a time, and none after kicks_closed_
  bool kicks_closed_ = false;  // under kick_mu_: the queue is (about to be) shut down
  grpc::Alarm wake_;           // before cq_ goes: its tag is drained first
  std::thread thread_;
};

// What every call shares: its context and tags, and its life on the polling thread. The
// request's completion runs the handler (Begin); the call is deleted once both its Finish and
// its end (gRPC's done tag) have completed: OnCancel first if it was cancelled, OnDone last.
// A call whose request comes back not ok (the server shutting down) has no done tag and is
// deleted at once. The queue hears of the deletion after it, so nothing of the call is left
// when CallQueue::Stop shuts the queue down.
template <class Reactor>
class CallLife : public QueuedCall {
 public:
  void Proceed(CallOp op, bool ok) final {
    switch (op) {
      case CallOp::kRequest:
        if (!ok) return End();
        reactor_ = Begin();
        return;
      case CallOp::kWrite:
        WriteDone(ok);
        return;  // (a call with a write in flight is never deleted: its Finish waits for it)
      case CallOp::kFinish:
        finished_ = true;
        break;
      case CallOp::kDone:
        ended_ = true;
        if (ctx_.IsCancelled() && reactor_) reactor_->OnCancel();
        break;
    }
    if (finished_ && ended_) {
      if (reactor_) reactor_->OnDone();
      End();
    }
  }
  grpc::ServerContextBase* context() final { return &ctx_; }

 protected:
  CallLife(CallQueue* queue, UnaryFinisher* unary, void* stream)
      : queue_(queue), ctx_(unary, stream) {}
  // On the request's completion: runs the handler, then asks for the method's next call (a
  // new call object and two ops on the queue), so the handler's post to the loop does not
  // wait for them.
  virtual Reactor* Begin() = 0;
  // A write completed (server-streaming calls).
  virtual void WriteDone(bool /*ok*/) {}
  Reactor* reactor() const { return reactor_; }

  CallQueue* const queue_;
  CallContext ctx_;
  CallTag request_tag_{this, CallOp::kRequest};
  CallTag finish_tag_{this, CallOp::kFinish};
  CallTag done_tag_{this, CallOp::kDone};

 private:
  void End() {
    CallQueue* queue = queue_;
    delete this;
    queue->Ended();
  }
  Reactor* reactor_ = nullptr;
  bool finished_ = false, ended_ = false;  // polling thread only
};

template <class Req, class Resp>
class UnaryCall final : public UnaryFinisher, public CallLife<UnaryReactor> {
 public:
  UnaryCall(CallQueue* queue, const UnaryMethod<Req, Resp>* m)
      : CallLife<UnaryReactor>(queue, this, nullptr), method_(m) {}
  void Request() {
    ctx_.AsyncNotifyWhenDone(&done_tag_);
    method_->request(&ctx_, &req_, &responder_, &request_tag_);
  }
  void FinishUnary(const grpc::Status& s) override {
    if (s.ok()) {
      responder_.Finish(resp_, s, &finish_tag_);
    } else {
      responder_.FinishWithError(s, &finish_tag_);
    }
  }

 private:
  UnaryReactor* Begin() override {
    UnaryReactor* reactor = method_->handle(&ctx_, &req_, &resp_);
    queue_->Next<UnaryCall>(method_);
    return reactor;
  }

  const UnaryMethod<Req, Resp>* method_;
  Req req_;
  Resp resp_;
  grpc::ServerAsyncResponseWriter<Resp> responder_{&ctx_};
};

template <class Req, class T>
class StreamCall final : public WriteStream<T>, public CallLife<WriteReactor<T>> {
  using Life = CallLife<WriteReactor<T>>;
  using Life::ctx_;
  using Life::done_tag_;
  using Life::finish_tag_;
  using Life::request_tag_;

 public:
  StreamCall(CallQueue* queue, const StreamMethod<Req, T>* m)
      : Life(queue, nullptr, static_cast<WriteStream<T>*>(this)), method_(m) {}
  void Request() {
    ctx_.AsyncNotifyWhenDone(&done_tag_);
    method_->request(&ctx_, &req_, &writer_, &request_tag_);
  }
  // After Finish (or StartWriteAndFinish) nothing more starts: a reactor's late write or
  // second finish is dropped, never an op on a call that may be gone. One write in flight
  // (the reactor's part of the contract).
  void StartWrite(const T* msg) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (finishing_) return;
    writing_ = true;
    writer_.Write(*msg, &write_tag_);
  }
  void StartWriteAndFinish(const T* msg, grpc::WriteOptions options,
                           const grpc::Status& s) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (finishing_) return;
    finishing_ = true;
    writer_.WriteAndFinish(*msg, options, s, &finish_tag_);
  }
  void Finish(const grpc::Status& s) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (finishing_) return;
    finishing_ = true;
    if (writing_) {
      deferred_ = s;
    } else {
      writer_.Finish(s, &finish_tag_);
    }
  }

 private:
  WriteReactor<T>* Begin() override {
    WriteReactor<T>* reactor = method_->handle(&ctx_, &req_);
    this->queue_->template Next<StreamCall>(method_);
    return reactor;
  }
  void WriteDone(bool ok) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      writing_ = false;
      // A Finish that came while the write was in flight goes out now.
      if (deferred_) writer_.Finish(*deferred_, &finish_tag_);
      deferred_.reset();
    }
    if (this->reactor()) this->reactor()->OnWriteDone(ok);
  }

  const StreamMethod<Req, T>* method_;
  Req req_;
  grpc::ServerAsyncWriter<T> writer_{&ctx_};
  std::mutex mu_;
  bool writing_ = false;                  // under mu_
  bool finishing_ = false;                // under mu_: Finish started or deferred
  std::optional<grpc::Status> deferred_;  // under mu_
  CallTag write_tag_{this, CallOp::kWrite};
};

}  // namespace conclave::api
