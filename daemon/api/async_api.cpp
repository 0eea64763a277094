#include "api/async_api.h"

namespace conclave::api {

template <class Req, class Resp, class Svc, class RequestFn, class Handle>
void AsyncApi::AddUnary(Svc& service, RequestFn request, Handle handle) {
  auto m = std::make_shared<UnaryMethod<Req, Resp>>();
  m->request = [this, &service, request](grpc::ServerContext* ctx, Req* req,
                                         grpc::ServerAsyncResponseWriter<Resp>* responder,
                                         void* tag) {
    (service.*request)(ctx, req, responder, queue_->cq(), queue_->cq(), tag);
  };
  m->handle = std::move(handle);
  auto* method = m.get();
  methods_.push_back(std::move(m));
  first_calls_.push_back([this, method] { queue_->Next<UnaryCall<Req, Resp>>(method); });
}

template <class Req, class T, class Svc, class RequestFn, class Handle>
void AsyncApi::AddStream(Svc& service, RequestFn request, Handle handle) {
  auto m = std::make_shared<StreamMethod<Req, T>>();
  m->request = [this, &service, request](grpc::ServerContext* ctx, Req* req,
                                         grpc::ServerAsyncWriter<T>* writer, void* tag) {
    (service.*request)(ctx, req, writer, queue_->cq(), queue_->cq(), tag);
  };
  m->handle = std::move(handle);
  auto* method = m.get();
  methods_.push_back(std::move(m));
  first_calls_.push_back([this, method] { queue_->Next<StreamCall<Req, T>>(method); });
}

#define CONCLAVE_UNARY(Name, Req, Resp)                                                  \
  AddUnary<Req, Resp>(service_, &Service::Request##Name,                                 \
                      [this](CallContext* ctx, const Req* req, Resp* resp) {              \
                        return conclave_.Name(ctx, req, resp);                            \
                      })
#define CONCLAVE_STREAM(Name, Req, T)                                                     \
  AddStream<Req, T>(service_, &Service::Request##Name, [this](CallContext* ctx, const Req* req) { \
    return conclave_.Name(ctx, req);                                                      \
  })

void AsyncApi::Register(grpc::ServerBuilder& builder) {
  builder.RegisterService(&service_);
  builder.RegisterService(&health_service_);
  queue_ = std::make_unique<CallQueue>(builder.AddCompletionQueue());
  using HealthReq = HealthService::Request;
  using HealthResp = HealthService::Response;
  AddUnary<HealthReq, HealthResp>(
      health_service_, &HealthAsync::RequestCheck,
      [this](CallContext* ctx, const HealthReq* req, HealthResp* resp) {
        return health_.Check(ctx, req, resp);
      });
  AddStream<HealthReq, HealthResp>(health_service_, &HealthAsync::RequestWatch,
                                   [this](CallContext* ctx, const HealthReq* req) {
                                     return health_.Watch(ctx, req);
                                   });
  CONCLAVE_UNARY(GetStatus, grpc::ByteBuffer, grpc::ByteBuffer);
  CONCLAVE_UNARY(RegisterHandle, v1::RegisterHandleRequest, v1::Handle);
  CONCLAVE_UNARY(ListHandles, v1::ListHandlesRequest, v1::ListHandlesReply);
  CONCLAVE_UNARY(Send, v1::SendRequest, v1::SendReply);
  CONCLAVE_UNARY(Check, v1::CheckRequest, v1::MessageList);
  CONCLAVE_UNARY(Reply, v1::ReplyRequest, v1::SendReply);
  CONCLAVE_UNARY(Inbox, v1::InboxRequest, v1::MessageList);
  CONCLAVE_UNARY(Wait, v1::WaitRequest, v1::WaitReply);
  CONCLAVE_UNARY(ListProfiles, v1::ListProfilesRequest, v1::ListProfilesReply);
  CONCLAVE_UNARY(CreateTerminal, v1::CreateTerminalRequest, v1::Terminal);
  CONCLAVE_UNARY(ListTerminals, v1::ListTerminalsRequest, v1::ListTerminalsReply);
  CONCLAVE_UNARY(GetTerminal, v1::GetTerminalRequest, v1::Terminal);
  CONCLAVE_UNARY(CloseTerminal, v1::CloseTerminalRequest, v1::Terminal);
  CONCLAVE_UNARY(ReadTranscript, v1::ReadTranscriptRequest, v1::TranscriptChunk);
  CONCLAVE_UNARY(CreateTask, v1::CreateTaskRequest, v1::CreateTaskReply);
  CONCLAVE_UNARY(ListTasks, v1::ListTasksRequest, v1::ListTasksReply);
  CONCLAVE_UNARY(GetTask, v1::GetTaskRequest, v1::TaskDetail);
  CONCLAVE_UNARY(UpdateTask, v1::UpdateTaskRequest, v1::Task);
  CONCLAVE_UNARY(CancelTask, v1::CancelTaskRequest, v1::Task);
  CONCLAVE_UNARY(Dispatch, v1::DispatchRequest, v1::DispatchInfo);
  CONCLAVE_UNARY(CreateGate, v1::CreateGateRequest, v1::Gate);
  CONCLAVE_UNARY(ResolveGate, v1::ResolveGateRequest, v1::Gate);
  CONCLAVE_UNARY(ListGates, v1::ListGatesRequest, v1::ListGatesReply);
  CONCLAVE_UNARY(StartReview, v1::StartReviewRequest, v1::Review);
  CONCLAVE_UNARY(GetReview, v1::GetReviewRequest, v1::Review);
  CONCLAVE_UNARY(ListReviews, v1::ListReviewsRequest, v1::ListReviewsReply);
  CONCLAVE_UNARY(WaitReview, v1::WaitReviewRequest, v1::Review);
  CONCLAVE_UNARY(Regate, v1::RegateRequest, v1::Review);
  CONCLAVE_UNARY(Report, v1::ReportRequest, v1::ReportReply);
  CONCLAVE_UNARY(Doctor, v1::DoctorRequest, v1::DoctorReply);
  CONCLAVE_UNARY(FlowStart, v1::FlowStartRequest, v1::Flow);
  CONCLAVE_UNARY(FlowShow, v1::FlowShowRequest, v1::Flow);
  CONCLAVE_UNARY(FlowList, v1::FlowListRequest, v1::FlowListReply);
  CONCLAVE_UNARY(FlowWait, v1::FlowWaitRequest, v1::Flow);
  CONCLAVE_UNARY(FlowCancel, v1::FlowCancelRequest, v1::Flow);
  CONCLAVE_UNARY(FlowClean, v1::FlowCleanRequest, v1::FlowListReply);
  CONCLAVE_STREAM(Watch, v1::WatchRequest, v1::Message);
  CONCLAVE_STREAM(FollowTranscript, v1::FollowTranscriptRequest, v1::TranscriptChunk);
}

#undef CONCLAVE_UNARY
#undef CONCLAVE_STREAM

void AsyncApi::Start(bool polled) { queue_->Start(std::move(first_calls_), polled); }

void AsyncApi::Stop() {
  if (queue_) queue_->Stop();
}

}  // namespace conclave::api
