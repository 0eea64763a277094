// ConclaveService::FollowTranscript: a server stream of a dispatch's transcript bytes as they
// are written, from a byte cursor, ending (eof=true, then OK) when the dispatch has finished
// and every byte was sent. The work is service::TranscriptFollower's; this reactor only moves
// its chunks onto the wire, one write in flight at a time (the follower hands over the next
// chunk after OnWriteDone), so a slow client costs one chunk of memory.
// Every reactor method that touches state runs on the loop: gRPC callbacks post there.
#include <boost/asio/post.hpp>

#include "api/conclave_service.h"
#include "api/proto_convert.h"

namespace conclave::api {
namespace {

class FollowReactor : public WriteReactor<v1::TranscriptChunk> {
 public:
  FollowReactor(CTX* ctx, boost::asio::io_context& io, service::Services& svc,
                const v1::FollowTranscriptRequest* req)
      : WriteReactor(ctx), io_(io), svc_(svc), req_(*req) {}

  // Any thread: start following on the loop, once the caller may.
  void Begin(service::PeerInfo peer) {
    boost::asio::post(io_, [this, peer] {
      if (finished_) return;
      auto caller = svc_.callers.Resolve(peer);
      if (Status s = svc_.callers.Admit(caller, domain::Rpc::kFollowTranscript); !s.ok()) {
        return FinishOnce(ToGrpc(s));
      }
      auto id = svc_.transcripts.Follow(
          req_.handle(), req_.dispatch_id(), req_.cursor(), req_.max_chunk_bytes(),
          [this](service::TranscriptFollower::Chunk c) { OnChunk(std::move(c)); });
      if (!id.ok()) return FinishOnce(ToGrpc(id.status()));
      if (!finished_) {
        id_ = id.value();
        following_ = true;
      }
    });
  }

  // Any thread: refuse before following.
  void Refuse(const grpc::Status& s) {
    boost::asio::post(io_, [this, s] { FinishOnce(s); });
  }

  void OnWriteDone(bool ok) override {
    boost::asio::post(io_, [this, ok] {
      if (finished_) return;
      if (!ok) return FinishOnce(grpc::Status::CANCELLED);  // the client went away
      svc_.transcripts.Ready(id_);
    });
  }

  void OnCancel() override {
    boost::asio::post(io_, [this] { FinishOnce(grpc::Status::CANCELLED); });
  }

  void OnDone() override {
    // After every handler posted earlier (they reference this).
    boost::asio::post(io_, [this] {
      Unfollow();
      delete this;
    });
  }

 private:
  // Loop thread: the follower's sink.
  void OnChunk(service::TranscriptFollower::Chunk c) {
    if (finished_) return;
    current_.set_dispatch_id(c.dispatch_id);
    current_.set_data(std::move(c.data));
    current_.set_next_cursor(c.next_cursor);
    current_.set_eof(c.eof);
    if (c.eof) {
      following_ = false;  // the follower dropped itself
      finished_ = true;
      StartWriteAndFinish(&current_, grpc::WriteOptions(), grpc::Status::OK);
      return;
    }
    StartWrite(&current_);
  }

  // Loop thread.
  void FinishOnce(const grpc::Status& s) {
    if (finished_) return;
    finished_ = true;
    Unfollow();
    Finish(s);
  }

  void Unfollow() {
    if (!following_) return;
    following_ = false;
    svc_.transcripts.Unfollow(id_);
  }

  boost::asio::io_context& io_;
  service::Services& svc_;
  v1::FollowTranscriptRequest req_;
  v1::TranscriptChunk current_;
  service::TranscriptFollower::FollowerId id_ = 0;
  bool following_ = false;  // loop thread only
  bool finished_ = false;   // loop thread only: Finish (or the last write) was started
};

}  // namespace

WriteReactor<v1::TranscriptChunk>* ConclaveService::FollowTranscript(
    CTX* ctx, const v1::FollowTranscriptRequest* req) {
  auto* r = new FollowReactor(ctx, io_, svc_, req);
  service::PeerInfo peer;
  if (grpc::Status admit = Identify(ctx, *req, &peer); !admit.ok()) {
    r->Refuse(admit);
    return r;
  }
  r->Begin(std::move(peer));
  return r;
}

}  // namespace conclave::api
