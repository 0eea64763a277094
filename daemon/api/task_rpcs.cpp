// ConclaveService: profiles, terminals, tasks, dispatch and decision-gate RPCs.
#include "api/conclave_service.h"
#include "api/proto_convert.h"

namespace conclave::api {

namespace {
template <typename Rec, typename Proto>
std::function<void(StatusOr<Rec>)> Into(Unary* r, Proto* resp,
                                        std::function<void(const Rec&, Proto*)> fill) {
  return [r, resp, fill = std::move(fill)](StatusOr<Rec> v) {
    if (!v.ok()) return r->Finish(ToGrpc(v.status()));
    fill(v.value(), resp);
    r->Finish(grpc::Status::OK);
  };
}
}  // namespace

Unary* ConclaveService::ListProfiles(CTX* ctx, const v1::ListProfilesRequest* req,
                                     v1::ListProfilesReply* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kListProfiles, [this, resp](Unary* r, const domain::Caller& caller) {
    for (const auto& p : svc_.Profiles()) ToProto(p, resp->add_profiles());
    for (const auto& e : svc_.ProfileErrors()) {
      auto* out = resp->add_errors();
      out->set_file(e.file);
      out->set_field(e.field);
      out->set_error(e.error);
    }
    FinishAfterCommit(r, Status::Ok());
  });
}

Unary* ConclaveService::CreateTerminal(CTX* ctx, const v1::CreateTerminalRequest* req,
                                       v1::Terminal* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kCreateTerminal, [this, req, resp](Unary* r, const domain::Caller& caller) {
    svc_.terminals.Create(req->profile(), req->handle(), req->cwd(), req->exclusive(),
                          Into<service::TerminalView, v1::Terminal>(
                              r, resp, [](const auto& t, auto* p) { ToProto(t, p); }));
  });
}

Unary* ConclaveService::ListTerminals(CTX* ctx, const v1::ListTerminalsRequest* req,
                                      v1::ListTerminalsReply* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kListTerminals, [this, req, resp](Unary* r, const domain::Caller& caller) {
    for (const auto& t : svc_.terminals.List(req->include_closed())) ToProto(t, resp->add_terminals());
    FinishAfterCommit(r, Status::Ok());
  });
}

Unary* ConclaveService::GetTerminal(CTX* ctx, const v1::GetTerminalRequest* req,
                                    v1::Terminal* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kGetTerminal, [this, req, resp](Unary* r, const domain::Caller& caller) {
    auto t = svc_.terminals.Get(req->handle());
    if (!t.ok()) return r->Finish(ToGrpc(t.status()));
    ToProto(t.value(), resp);
    FinishAfterCommit(r, Status::Ok());
  });
}

Unary* ConclaveService::CloseTerminal(CTX* ctx, const v1::CloseTerminalRequest* req,
                                      v1::Terminal* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kCloseTerminal, [this, req, resp](Unary* r, const domain::Caller& caller) {
    svc_.terminals.Close(req->handle(), req->force(),
                         Into<service::TerminalView, v1::Terminal>(
                             r, resp, [](const auto& t, auto* p) { ToProto(t, p); }));
  });
}

Unary* ConclaveService::ReadTranscript(CTX* ctx, const v1::ReadTranscriptRequest* req,
                                       v1::TranscriptChunk* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kReadTranscript, [this, req, resp](Unary* r, const domain::Caller& caller) {
    auto t = svc_.terminals.ReadTranscript(req->handle(), req->dispatch_id(), req->cursor(),
                                       req->max_bytes());
    if (!t.ok()) return r->Finish(ToGrpc(t.status()));
    resp->set_dispatch_id(t->dispatch_id);
    resp->set_data(t->data);
    resp->set_next_cursor(t->next_cursor);
    resp->set_eof(t->eof);
    FinishAfterCommit(r, Status::Ok());
  });
}

Unary* ConclaveService::CreateTask(CTX* ctx, const v1::CreateTaskRequest* req,
                                   v1::CreateTaskReply* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kCreateTask, [this, req, resp](Unary* r, const domain::Caller& caller) {
    service::CreateTaskInput in;
    in.task.brief = req->brief();
    in.task.title = req->title();
    in.task.idem_key = req->idempotency_key();
    in.task.hypothesis = req->hypothesis();
    in.task.role = req->role();
    in.task.auto_retry = req->auto_retry();
    in.task.coordinator = req->coordinator();
    in.task.session = req->session();
    in.task.budget_usd = req->budget_usd();
    in.task.scope = req->scope();
    in.task.validation = req->validation();
    in.deps.assign(req->deps().begin(), req->deps().end());
    svc_.tasks.Create(std::move(in), [r, resp](StatusOr<service::CreateTaskResult> c) {
      if (!c.ok()) return r->Finish(ToGrpc(c.status()));
      ToProto(c->task, resp->mutable_task());
      resp->set_existing(c->existing);
      r->Finish(grpc::Status::OK);
    });
  });
}

Unary* ConclaveService::ListTasks(CTX* ctx, const v1::ListTasksRequest* req,
                                  v1::ListTasksReply* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kListTasks, [this, req, resp](Unary* r, const domain::Caller& caller) {
    std::optional<domain::TaskState> status;
    if (!req->status().empty()) {
      status = domain::ParseTaskState(req->status());
      if (!status) {
        return r->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                      "status: '" + req->status() + "' is not a task status"));
      }
    }
    for (const auto& t : svc_.tasks.List(status, req->limit())) ToProto(t, resp->add_tasks());
    FinishAfterCommit(r, Status::Ok());
  });
}

Unary* ConclaveService::GetTask(CTX* ctx, const v1::GetTaskRequest* req, v1::TaskDetail* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kGetTask, [this, req, resp](Unary* r, const domain::Caller& caller) {
    auto d = svc_.tasks.GetFor(caller, req->id());
    if (!d.ok()) return r->Finish(ToGrpc(d.status()));
    ToProto(d->task, resp->mutable_task());
    for (const auto& x : d->dispatches) ToProto(x, resp->add_dispatches());
    for (const auto& m : d->events) ToProto(m, resp->add_events());
    for (const auto& g : d->gates) ToProto(g, resp->add_gates());
    FinishAfterCommit(r, Status::Ok());
  });
}

Unary* ConclaveService::UpdateTask(CTX* ctx, const v1::UpdateTaskRequest* req, v1::Task* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kUpdateTask, [this, req, resp](Unary* r, const domain::Caller& caller) {
    service::TaskUpdateInput in;
    in.id = req->id();
    if (req->has_title()) in.title = req->title();
    if (req->has_brief()) in.brief = req->brief();
    if (req->has_hypothesis()) in.hypothesis = req->hypothesis();
    if (req->has_scope()) in.scope = req->scope();
    if (req->has_validation()) in.validation = req->validation();
    if (req->has_auto_retry()) in.auto_retry = req->auto_retry();
    if (req->has_budget_usd()) in.budget_usd = req->budget_usd();
    svc_.tasks.Update(in, Into<service::TaskView, v1::Task>(
                              r, resp, [](const auto& t, auto* p) { ToProto(t, p); }));
  });
}

Unary* ConclaveService::CancelTask(CTX* ctx, const v1::CancelTaskRequest* req, v1::Task* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kCancelTask, [this, req, resp](Unary* r, const domain::Caller& caller) {
    svc_.tasks.Cancel(req->id(), req->reason(),
                      Into<service::TaskView, v1::Task>(
                          r, resp, [](const auto& t, auto* p) { ToProto(t, p); }));
  });
}

Unary* ConclaveService::Dispatch(CTX* ctx, const v1::DispatchRequest* req,
                                 v1::DispatchInfo* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kDispatch, [this, req, resp](Unary* r, const domain::Caller& caller) {
    service::DispatchInput in;
    in.task_id = req->task_id();
    in.to = req->to();
    in.timeout_s = req->timeout_s();
    in.from = req->from();
    in.budget_usd = req->budget_usd();
    svc_.scheduler.Dispatch(in, Into<domain::Dispatch, v1::DispatchInfo>(
                                r, resp, [](const auto& d, auto* p) { ToProto(d, p); }));
  });
}

Unary* ConclaveService::CreateGate(CTX* ctx, const v1::CreateGateRequest* req, v1::Gate* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kCreateGate, [this, req, resp](Unary* r, const domain::Caller& caller) {
    std::vector<std::string> options(req->options().begin(), req->options().end());
    svc_.gates.Create(req->task_id(), req->question(), options, 0,
                          Into<domain::Gate, v1::Gate>(
                              r, resp, [](const auto& g, auto* p) { ToProto(g, p); }));
  });
}

Unary* ConclaveService::ResolveGate(CTX* ctx, const v1::ResolveGateRequest* req, v1::Gate* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kResolveGate, [this, req, resp](Unary* r, const domain::Caller& caller) {
    // Who decides: the kernel's view of the peer; the client's own statement only when the
    // daemon has none (a loopback TCP caller).
    domain::CallerIdentity claimed;
    if (req->has_caller_uid()) claimed.uid = req->caller_uid();
    if (req->has_caller_pid()) claimed.pid = req->caller_pid();
    claimed.exe = req->caller_exe();
    claimed.tty = req->caller_tty();
    svc_.gates.Resolve(req->id(), req->decision(), domain::IdentityOf(caller, claimed), req->reason(),
                           Into<domain::Gate, v1::Gate>(
                               r, resp, [](const auto& g, auto* p) { ToProto(g, p); }));
  });
}

Unary* ConclaveService::ListGates(CTX* ctx, const v1::ListGatesRequest* req,
                                  v1::ListGatesReply* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kListGates, [this, req, resp](Unary* r, const domain::Caller& caller) {
    for (const auto& g : svc_.gates.List(req->open_only(), req->task_id())) {
      ToProto(g, resp->add_gates());
    }
    FinishAfterCommit(r, Status::Ok());
  });
}

}  // namespace conclave::api
