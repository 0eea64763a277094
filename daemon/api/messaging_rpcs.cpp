// ConclaveService: daemon status and messaging RPCs.
#include <boost/asio/post.hpp>
#include <mutex>
#include <deque>
#include <unistd.h>

#include "api/conclave_service.h"
#include "api/grpc_server.h"
#include "api/proto_convert.h"
#include "api/request_checks.h"

namespace conclave::api {


grpc::Status ConclaveService::Identify(CTX* ctx, const google::protobuf::Message& req,
                                       service::PeerInfo* peer) const {
  // Every call of the API gets here first: whatever status it ends with is marked as the
  // daemon's own (with an OK status the client never looks). Set per call here instead of by
  // a server interceptor, which gRPC ran — an object and a hook — at every step of every call.
  ctx->AddTrailingMetadata(kOriginKey, kOriginValue);
  if (stopping_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "conclaved is shutting down");
  auto p = peers_.Lookup(ctx->peer());
  if (!p) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "unknown connection " + ctx->peer() + ": callers are identified when the "
                        "daemon accepts them");
  }
  if (p->tcp) {
    const auto& md = ctx->client_metadata();
    auto it = md.find("authorization");
    std::string want = "Bearer " + token_;
    std::string got = it == md.end() ? "" : std::string(it->second.data(), it->second.size());
    // Constant-time comparison: the time taken says nothing about how much matched.
    unsigned char diff = got.size() == want.size() ? 0 : 1;
    for (size_t i = 0; i < want.size(); ++i) {
      diff |= static_cast<unsigned char>(want[i] ^ (i < got.size() ? got[i] : 0));
    }
    if (token_.empty() || diff != 0) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "a bearer token is required on this listener");
    }
  }
  if (Status s = CheckRequest(req); !s.ok()) return ToGrpc(s);
  *peer = std::move(*p);
  return grpc::Status::OK;
}

Unary* ConclaveService::OnLoop(
    CTX* ctx, const google::protobuf::Message& req, domain::Rpc rpc,
    std::function<void(Unary*, const domain::Caller&)> fn) {
  Unary* reactor = ctx->DefaultReactor();
  service::PeerInfo peer;
  if (grpc::Status admit = Identify(ctx, req, &peer); !admit.ok()) {
    reactor->Finish(admit);
    return reactor;
  }
  boost::asio::post(io_, [this, reactor, rpc, peer = std::move(peer), fn = std::move(fn)] {
    try {
      domain::Caller caller = svc_.callers.Resolve(peer);
      if (Status s = svc_.callers.Admit(caller, rpc); !s.ok()) return reactor->Finish(ToGrpc(s));
      fn(reactor, caller);
    } catch (const std::exception& e) {
      reactor->Finish(grpc::Status(grpc::StatusCode::INTERNAL, e.what()));
    }
  });
  return reactor;
}

void ConclaveService::FinishAfterCommit(Unary* reactor, const Status& s) {
  svc_.messaging.AfterCommit([reactor, s](bool ok) {
    if (!ok) {
      reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the store could not commit"));
    } else {
      reactor->Finish(ToGrpc(s));
    }
  });
}

Unary* ConclaveService::GetStatus(CTX* ctx, const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* reply) {
  // A raw method: the request is parsed here as the generated code parses the others, and a
  // request that cannot be parsed is answered as gRPC's async API answers one for them.
  v1::GetStatusRequest req;
  grpc::ByteBuffer bytes(*request);
  if (!proto::LenientDeserialize(&bytes, &req).ok()) {
    Unary* reactor = ctx->DefaultReactor();
    reactor->Finish(grpc::Status(grpc::StatusCode::INTERNAL, "Unable to parse request"));
    return reactor;
  }
  return OnLoop(ctx, req, domain::Rpc::kGetStatus, [this, reply](Unary* r, const domain::Caller&) {
    status_reply_.Serialize(svc_).Swap(reply);
    FinishAfterCommit(r, Status::Ok());
  });
}

Unary* ConclaveService::RegisterHandle(CTX* ctx, const v1::RegisterHandleRequest* req,
                                       v1::Handle* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kRegisterHandle, [this, req, resp](Unary* r, const domain::Caller& caller) {
    svc_.messaging.RegisterHandle(req->name(), [r, resp](StatusOr<store::HandleRecord> h) {
      if (!h.ok()) return r->Finish(ToGrpc(h.status()));
      ToProto(h.value(), resp);
      r->Finish(grpc::Status::OK);
    });
  });
}

Unary* ConclaveService::ListHandles(CTX* ctx, const v1::ListHandlesRequest* req,
                                    v1::ListHandlesReply* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kListHandles, [this, resp](Unary* r, const domain::Caller& caller) {
    for (const auto& h : svc_.messaging.ListHandles()) ToProto(h, resp->add_handles());
    FinishAfterCommit(r, Status::Ok());
  });
}

namespace {
void FillSend(const service::SendResult& s, v1::SendReply* resp) {
  for (const auto& m : s.messages) ToProto(m, resp->add_messages());
  resp->set_thread_id(s.thread_id);
}
}  // namespace

Unary* ConclaveService::Send(CTX* ctx, const v1::SendRequest* req, v1::SendReply* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kSend, [this, req, resp](Unary* r, const domain::Caller& caller) {
    service::SendInput in;
    in.to = req->to();
    in.message = FromProto(*req);
    in.dispatch_token = req->dispatch_token();
    in.caller = caller;
    svc_.messaging.Send(std::move(in), [r, resp](StatusOr<service::SendResult> s) {
      if (!s.ok()) return r->Finish(ToGrpc(s.status()));
      FillSend(s.value(), resp);
      r->Finish(grpc::Status::OK);
    });
  });
}

Unary* ConclaveService::Check(CTX* ctx, const v1::CheckRequest* req, v1::MessageList* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kCheck, [this, req, resp](Unary* r, const domain::Caller& caller) {
    std::vector<std::string> types(req->types().begin(), req->types().end());
    svc_.messaging.Check(caller, req->handle(), types, req->peek(), req->limit(),
                         [this, r, resp](StatusOr<std::vector<domain::MessageRecord>> ms) {
                           if (!ms.ok()) return r->Finish(ToGrpc(ms.status()));
                           for (const auto& m : ms.value()) ToProto(m, resp->add_messages());
                           resp->set_last_seq(svc_.LastSeq());
                           r->Finish(grpc::Status::OK);
                         });
  });
}

Unary* ConclaveService::Reply(CTX* ctx, const v1::ReplyRequest* req, v1::SendReply* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kReply, [this, req, resp](Unary* r, const domain::Caller& caller) {
    domain::MessageRecord m;
    m.body = req->body();
    m.subject = req->subject();
    m.payload = req->payload_json();
    svc_.messaging.Reply(caller, req->seq(), req->from(), std::move(m),
                         [r, resp](StatusOr<service::SendResult> s) {
                           if (!s.ok()) return r->Finish(ToGrpc(s.status()));
                           FillSend(s.value(), resp);
                           r->Finish(grpc::Status::OK);
                         });
  });
}

Unary* ConclaveService::Inbox(CTX* ctx, const v1::InboxRequest* req, v1::MessageList* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kInbox, [this, req, resp](Unary* r, const domain::Caller& caller) {
    domain::MessageFilter f;
    f.types.assign(req->types().begin(), req->types().end());
    f.to = req->to();
    f.from = req->from();
    if (req->task_id()) f.task_ids = {req->task_id()};
    f.unread_only = req->unread_only();
    auto ms = svc_.messaging.Inbox(caller, f, req->limit());
    if (!ms.ok()) return r->Finish(ToGrpc(ms.status()));
    for (const auto& m : ms.value()) ToProto(m, resp->add_messages());
    resp->set_last_seq(svc_.LastSeq());
    FinishAfterCommit(r, Status::Ok());
  });
}

// Wait: a long-poll whose client may go away; OnCancel drops the waiter.
namespace {
class WaitReactor : public UnaryReactor {
 public:
  struct Shared {
    bool finished = false;   // loop thread only
    uint64_t waiter_id = 0;  // loop thread only
  };
  WaitReactor(CTX* ctx, boost::asio::io_context& io, service::MessagingService& m)
      : UnaryReactor(ctx), io_(io), messaging_(m), shared_(std::make_shared<Shared>()) {}
  std::shared_ptr<Shared> shared() { return shared_; }
  void OnCancel() override {
    auto shared = shared_;
    auto* self = this;
    boost::asio::post(io_, [shared, self, &m = messaging_] {
      if (shared->finished) return;
      shared->finished = true;
      m.CancelWait(shared->waiter_id);
      self->Finish(grpc::Status::CANCELLED);
    });
  }
  void OnDone() override { delete this; }

 private:
  boost::asio::io_context& io_;
  service::MessagingService& messaging_;
  std::shared_ptr<Shared> shared_;
};
}  // namespace

Unary* ConclaveService::Wait(CTX* ctx, const v1::WaitRequest* req, v1::WaitReply* resp) {
  auto* reactor = new WaitReactor(ctx, io_, svc_.messaging);
  service::PeerInfo peer;
  if (grpc::Status admit = Identify(ctx, *req, &peer); !admit.ok()) {
    reactor->shared()->finished = true;  // a cancel racing this must not finish it again
    reactor->Finish(admit);
    return reactor;
  }
  auto shared = reactor->shared();
  boost::asio::post(io_, [this, reactor, shared, req, resp, peer] {
    if (shared->finished) return;
    try {
    service::WaitInput in;
    in.caller = svc_.callers.Resolve(peer);
    if (Status s = svc_.callers.Admit(in.caller, domain::Rpc::kWait); !s.ok()) {
      shared->finished = true;
      return reactor->Finish(ToGrpc(s));
    }
    in.filter.types.assign(req->types().begin(), req->types().end());
    in.filter.to = req->to();
    in.filter.from = req->from();
    in.filter.task_ids.assign(req->task_ids().begin(), req->task_ids().end());
    in.after_seq = req->after_seq();
    in.from_now = req->from_now();
    in.timeout_ms = req->timeout_ms();
    in.limit = req->limit();
    uint64_t id = svc_.messaging.Wait(in, [this, reactor, shared, resp](
                                              StatusOr<service::WaitResult> w) {
      if (shared->finished) return;
      shared->finished = true;
      if (!w.ok()) return reactor->Finish(ToGrpc(w.status()));
      for (const auto& m : w->messages) ToProto(m, resp->add_messages());
      resp->set_cursor(w->cursor);
      resp->set_timed_out(w->timed_out);
      for (const auto& l : w->liveness) {
        auto* p = resp->add_liveness();
        p->set_task_id(l.task_id);
        p->set_dispatch_id(l.dispatch_id);
        p->set_process_alive(l.process_alive);
        p->set_last_output_age_ms(l.last_output_age_ms);
        p->set_state(l.state);
      }
      // Matches found by the first query may belong to a batch still open: ack after commit.
      svc_.messaging.AfterCommit([reactor](bool ok) {
        reactor->Finish(ok ? grpc::Status::OK
                           : grpc::Status(grpc::StatusCode::UNAVAILABLE, "store failure"));
      });
    });
    if (!shared->finished) shared->waiter_id = id;
    } catch (const std::exception& e) {
      if (shared->finished) return;
      shared->finished = true;
      reactor->Finish(grpc::Status(grpc::StatusCode::INTERNAL, e.what()));
    }
  });
  return reactor;
}

}  // namespace conclave::api
