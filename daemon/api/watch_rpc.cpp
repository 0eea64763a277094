// ConclaveService::Watch: a server stream of every event after a cursor, filtered like Wait
// (types, to, from, task ids). The backlog is replayed in pages from the store, then the
// stream switches to live events in the same loop turn as its last page, so nothing falls in
// between. One write in flight at a time; a client
// that falls more than kMaxQueued events behind is ended with RESOURCE_EXHAUSTED and resumes
// from its cursor.
#include <boost/asio/post.hpp>
#include <deque>
#include <mutex>

#include "api/conclave_service.h"
#include "api/proto_convert.h"

namespace conclave::api {
namespace {

constexpr size_t kPage = 500;
constexpr size_t kMaxQueued = 20000;

class WatchReactor : public WriteReactor<v1::Message> {
 public:
  WatchReactor(CTX* ctx, boost::asio::io_context& io, service::Services& svc,
               const v1::WatchRequest* req)
      : WriteReactor(ctx), io_(io), svc_(svc) {
    filter_.types.assign(req->types().begin(), req->types().end());
    filter_.to = req->to();
    filter_.from = req->from();
    filter_.task_ids.assign(req->task_ids().begin(), req->task_ids().end());
    from_now_ = req->from_now();
    cursor_ = req->after_seq();
    state_ = std::make_shared<LoopState>();
  }

  void Begin(service::PeerInfo peer) {
    auto st = state_;
    boost::asio::post(io_, [this, st, peer] {
      if (st->done) return;
      auto caller = svc_.callers.Resolve(peer);
      if (Status s = svc_.callers.Admit(caller, domain::Rpc::kWatch); !s.ok()) {
        st->done = true;
        End(ToGrpc(s));
        return;
      }
      if (from_now_) cursor_ = svc_.messaging.LastSeq();
      LoadPage();
    });
  }

  // Loop thread: fetch the next page of backlog, or go live.
  void LoadPage() {
    std::vector<domain::MessageRecord> page;
    try {
      auto backlog = svc_.messaging.Backlog(filter_, cursor_, static_cast<int>(kPage));
      if (!backlog.ok()) {
        state_->done = true;
        End(ToGrpc(backlog.status()));
        return;
      }
      page = std::move(backlog.value());
    } catch (const std::exception& e) {
      End(grpc::Status(grpc::StatusCode::INTERNAL, e.what()));
      return;
    }
    for (const auto& m : page) cursor_ = m.seq;
    Enqueue(page);
    if (page.size() < kPage) {
      auto st = state_;
      state_->watcher = svc_.messaging.Subscribe(
          filter_, cursor_,
          [this, st](const domain::MessageRecord& m) {
            if (st->done) return false;
            return Enqueue({m});
          });
      state_->live = true;
    } else {
      std::lock_guard<std::mutex> lock(mu_);  // OnWriteDone reads it on the polling thread
      backlog_pending_ = true;
    }
  }

  // Any thread: queue messages and start a write if none is in flight.
  bool Enqueue(const std::vector<domain::MessageRecord>& ms) {
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_) return false;
    for (const auto& m : ms) {
      v1::Message p;
      ToProto(m, &p);
      queue_.push_back(std::move(p));
    }
    if (queue_.size() > kMaxQueued) {
      ended_ = true;
      Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          "watch client too slow; resume with --after " +
                              std::to_string(queue_.front().seq() - 1)));
      return false;
    }
    if (!writing_ && !queue_.empty()) {
      writing_ = true;
      current_ = std::move(queue_.front());
      queue_.pop_front();
      StartWrite(&current_);
    }
    return true;
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (!ok || ended_) return;
    if (!queue_.empty()) {
      writing_ = true;
      current_ = std::move(queue_.front());
      queue_.pop_front();
      StartWrite(&current_);
      return;
    }
    if (backlog_pending_) {
      backlog_pending_ = false;
      auto st = state_;
      boost::asio::post(io_, [this, st] {
        if (!st->done) LoadPage();
      });
    }
  }

  void OnCancel() override { End(grpc::Status::CANCELLED); }

  // Loop thread or polling thread: end the stream once.
  void End(const grpc::Status& s) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (ended_) return;
      ended_ = true;
    }
    auto st = state_;
    auto& messaging = svc_.messaging;
    boost::asio::post(io_, [st, &messaging] {
      st->done = true;
      if (st->live) messaging.Unsubscribe(st->watcher);
    });
    Finish(s);
  }

  void OnDone() override {
    // Delete on the loop, after every handler posted earlier (they may reference this).
    auto st = state_;
    auto& messaging = svc_.messaging;
    boost::asio::post(io_, [this, st, &messaging] {
      st->done = true;
      if (st->live) messaging.Unsubscribe(st->watcher);
      delete this;
    });
  }

 private:
  struct LoopState {
    bool done = false;
    bool live = false;
    uint64_t watcher = 0;
  };
  boost::asio::io_context& io_;
  service::Services& svc_;
  domain::MessageFilter filter_;
  bool from_now_ = false;
  int64_t cursor_ = 0;
  std::shared_ptr<LoopState> state_;
  std::mutex mu_;
  std::deque<v1::Message> queue_;
  v1::Message current_;
  bool writing_ = false, ended_ = false, backlog_pending_ = false;
};

}  // namespace

WriteReactor<v1::Message>* ConclaveService::Watch(CTX* ctx, const v1::WatchRequest* req) {
  auto* r = new WatchReactor(ctx, io_, svc_, req);
  service::PeerInfo peer;
  if (grpc::Status admit = Identify(ctx, *req, &peer); !admit.ok()) {
    r->End(admit);
    return r;
  }
  r->Begin(std::move(peer));
  return r;
}

}  // namespace conclave::api
