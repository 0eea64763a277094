// ConclaveService: the handlers of the Conclave API (served by api/async_api on gRPC's async
// API, one completion queue, polled by the loop itself or by a thread of its own:
// api/queue_loop.h). Each RPC posts its work onto the service loop (one strand owns all state)
// and finishes its reactor from there; no RPC blocks the polling thread, so thousands of
// long-poll Waits cost no threads and no CPU.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>

#include "../../proto/lenient/lenient_parse.h"  // first: the handlers parse leniently
// The raw GetStatus that ConclaveService takes from the generated service hides the typed
// overload it replaces, by design: clang's -Woverloaded-virtual would say so in every file.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverloaded-virtual"
#include "conclave/v1/conclave.grpc.pb.h"
#pragma GCC diagnostic pop
#include "api/async_calls.h"
#include "api/peer_table.h"
#include "api/status_reply_cache.h"
#include "domain/caller.h"
#include "service/services.h"

namespace conclave::api {

namespace v1 = ::conclave::v1;
using CTX = CallContext;
using Unary = UnaryReactor;

// GetStatus is a raw method: StatusReplyCache serializes its reply (the rest are typed).
class ConclaveService final {
 public:
  ConclaveService(boost::asio::io_context& io, service::Services& services)
      : io_(io), svc_(services) {}

  // Refuse new RPCs with UNAVAILABLE (shutdown in progress).
  void SetStopping() { stopping_ = true; }
  // Require "authorization: Bearer <token>" on every call (TCP listeners).
  void RequireToken(std::string token) { token_ = std::move(token); }
  // Who is calling (from the kernel, recorded at accept), or a refusal: stopping, an unknown
  // connection, a missing/wrong bearer token on TCP, a request that fails the checks every
  // request passes (api/request_checks). Marks the call's status, whatever it will be, as
  // the daemon's own (kOriginKey): every RPC comes here first. Polling thread.
  grpc::Status Identify(CTX* ctx, const google::protobuf::Message& req,
                        service::PeerInfo* peer) const;
  PeerTable& peers() { return peers_; }


  Unary* GetStatus(CTX*, const grpc::ByteBuffer* request, grpc::ByteBuffer* reply);
  Unary* RegisterHandle(CTX*, const v1::RegisterHandleRequest*, v1::Handle*);
  Unary* ListHandles(CTX*, const v1::ListHandlesRequest*, v1::ListHandlesReply*);
  Unary* Send(CTX*, const v1::SendRequest*, v1::SendReply*);
  Unary* Check(CTX*, const v1::CheckRequest*, v1::MessageList*);
  Unary* Reply(CTX*, const v1::ReplyRequest*, v1::SendReply*);
  Unary* Inbox(CTX*, const v1::InboxRequest*, v1::MessageList*);
  Unary* Wait(CTX*, const v1::WaitRequest*, v1::WaitReply*);
  WriteReactor<v1::Message>* Watch(CTX*, const v1::WatchRequest*);

  Unary* ListProfiles(CTX*, const v1::ListProfilesRequest*, v1::ListProfilesReply*);
  Unary* CreateTerminal(CTX*, const v1::CreateTerminalRequest*, v1::Terminal*);
  Unary* ListTerminals(CTX*, const v1::ListTerminalsRequest*, v1::ListTerminalsReply*);
  Unary* GetTerminal(CTX*, const v1::GetTerminalRequest*, v1::Terminal*);
  Unary* CloseTerminal(CTX*, const v1::CloseTerminalRequest*, v1::Terminal*);
  Unary* ReadTranscript(CTX*, const v1::ReadTranscriptRequest*, v1::TranscriptChunk*);
  WriteReactor<v1::TranscriptChunk>* FollowTranscript(CTX*, const v1::FollowTranscriptRequest*);
  Unary* CreateTask(CTX*, const v1::CreateTaskRequest*, v1::CreateTaskReply*);
  Unary* ListTasks(CTX*, const v1::ListTasksRequest*, v1::ListTasksReply*);
  Unary* GetTask(CTX*, const v1::GetTaskRequest*, v1::TaskDetail*);
  Unary* UpdateTask(CTX*, const v1::UpdateTaskRequest*, v1::Task*);
  Unary* CancelTask(CTX*, const v1::CancelTaskRequest*, v1::Task*);
  Unary* Dispatch(CTX*, const v1::DispatchRequest*, v1::DispatchInfo*);
  Unary* CreateGate(CTX*, const v1::CreateGateRequest*, v1::Gate*);
  Unary* ResolveGate(CTX*, const v1::ResolveGateRequest*, v1::Gate*);
  Unary* ListGates(CTX*, const v1::ListGatesRequest*, v1::ListGatesReply*);
  Unary* StartReview(CTX*, const v1::StartReviewRequest*, v1::Review*);
  Unary* GetReview(CTX*, const v1::GetReviewRequest*, v1::Review*);
  Unary* ListReviews(CTX*, const v1::ListReviewsRequest*, v1::ListReviewsReply*);
  Unary* WaitReview(CTX*, const v1::WaitReviewRequest*, v1::Review*);
  Unary* Regate(CTX*, const v1::RegateRequest*, v1::Review*);
  Unary* Report(CTX*, const v1::ReportRequest*, v1::ReportReply*);
  Unary* Doctor(CTX*, const v1::DoctorRequest*, v1::DoctorReply*);
  Unary* FlowStart(CTX*, const v1::FlowStartRequest*, v1::Flow*);
  Unary* FlowShow(CTX*, const v1::FlowShowRequest*, v1::Flow*);
  Unary* FlowList(CTX*, const v1::FlowListRequest*, v1::FlowListReply*);
  Unary* FlowWait(CTX*, const v1::FlowWaitRequest*, v1::Flow*);
  Unary* FlowCancel(CTX*, const v1::FlowCancelRequest*, v1::Flow*);
  Unary* FlowClean(CTX*, const v1::FlowCleanRequest*, v1::FlowListReply*);

 private:
  // Runs fn on the loop with the caller, once the caller may call rpc at all (the service
  // binds a worker to its own dispatch); fn must eventually call reactor->Finish.
  Unary* OnLoop(CTX* ctx, const google::protobuf::Message& req, domain::Rpc rpc,
               std::function<void(Unary*, const domain::Caller&)> fn);
  // Finishes a reactor after the current batch commits (at once when nothing is open).
  void FinishAfterCommit(Unary* reactor, const Status& s);

  boost::asio::io_context& io_;
  service::Services& svc_;
  std::atomic<bool> stopping_{false};
  std::string token_;
  PeerTable peers_;
  StatusReplyCache status_reply_;  // loop thread only
  friend class WatchReactor;
};

}  // namespace conclave::api
