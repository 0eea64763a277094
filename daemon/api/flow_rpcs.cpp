// ConclaveService: flow RPCs (coordinators only: domain::Rpc::kFlow is denied to workers).
// A pure mapping onto service::FlowService.

#include <nlohmann/json.hpp>

#include "api/conclave_service.h"
#include "api/proto_convert.h"

namespace conclave::api {
namespace {

void FlowToProto(const service::FlowView& v, v1::Flow* out) {
  const domain::Flow& f = v.flow;
  out->set_id(f.id);
  out->set_status(f.status);
  out->set_step(std::string(domain::FlowStepName(f.step)));
  out->set_title(f.title);
  out->set_repo(f.repo);
  out->set_base(f.base);
  out->set_base_sha(f.base_sha);
  out->set_head_sha(f.head_sha);
  out->set_branch(f.branch);
  out->set_worktree(f.worktree);
  out->set_writer(f.writer);
  out->set_writer_family(f.writer_family);
  out->set_budget_usd(f.budget_usd);
  out->set_dispatches_json(v.dispatches.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  for (auto* list : {&f.verify, &f.reviewers}) {
    auto j = nlohmann::json::parse(*list, nullptr, false);
    if (!j.is_array()) continue;
    for (const auto& x : j) {
      if (!x.is_string()) continue;
      if (list == &f.verify) {
        out->add_verify(x.get<std::string>());
      } else {
        out->add_reviewers(x.get<std::string>());
      }
    }
  }
  out->set_review_mode(f.review_mode);
  out->set_cap(f.cap);
  out->set_round(f.round);
  out->set_fix_rounds(f.fix_rounds);
  out->set_max_fix_rounds(f.max_fix_rounds);
  out->set_ship(f.ship);
  out->set_task_id(f.task_id);
  out->set_review_id(f.review_id);
  out->set_review_verdict(v.review_verdict);
  out->set_note(f.note);
  out->set_last_error(f.last_error);
  out->set_history_json(f.history);
  out->set_merge_command(v.merge_command);
  out->set_implement_runs(v.implement_runs);
  out->set_verify_runs(v.verify_runs);
  out->set_cost_usd(v.cost_usd);
  out->set_cleaned(f.cleaned);
  out->set_idempotency_key(f.idem_key);
  out->set_created_unix_ms(f.created_ms);
  out->set_updated_unix_ms(f.updated_ms);
}

std::function<void(StatusOr<service::FlowView>)> IntoFlow(Unary* r, v1::Flow* resp) {
  return [r, resp](StatusOr<service::FlowView> v) {
    if (!v.ok()) return r->Finish(ToGrpc(v.status()));
    FlowToProto(v.value(), resp);
    r->Finish(grpc::Status::OK);
  };
}

}  // namespace

Unary* ConclaveService::FlowStart(CTX* ctx, const v1::FlowStartRequest* req, v1::Flow* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kFlow, [this, req, resp](Unary* r, const domain::Caller&) {
    service::StartFlowInput in;
    in.repo = req->repo();
    in.brief = req->brief();
    in.writer = req->writer();
    in.base = req->base();
    in.title = req->title();
    in.verify.assign(req->verify().begin(), req->verify().end());
    in.review_mode = req->review_mode();
    in.reviewers.assign(req->reviewers().begin(), req->reviewers().end());
    in.cap = req->cap();
    in.max_fix_rounds = req->max_fix_rounds();
    in.key = req->idempotency_key();
    in.ship = req->ship();
    in.coordinator = req->coordinator();
    in.budget_usd = req->budget_usd();
    svc_.flows.Start(std::move(in), IntoFlow(r, resp));
  });
}

Unary* ConclaveService::FlowShow(CTX* ctx, const v1::FlowShowRequest* req, v1::Flow* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kFlow, [this, req, resp](Unary* r, const domain::Caller&) {
    auto v = svc_.flows.Get(req->id());
    if (!v.ok()) return r->Finish(ToGrpc(v.status()));
    FlowToProto(v.value(), resp);
    FinishAfterCommit(r, Status::Ok());
  });
}

Unary* ConclaveService::FlowList(CTX* ctx, const v1::FlowListRequest* req, v1::FlowListReply* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kFlow, [this, req, resp](Unary* r, const domain::Caller&) {
    auto list = svc_.flows.List(req->status(), req->limit());
    if (!list.ok()) return r->Finish(ToGrpc(list.status()));
    for (const auto& v : list.value()) FlowToProto(v, resp->add_flows());
    FinishAfterCommit(r, Status::Ok());
  });
}

Unary* ConclaveService::FlowWait(CTX* ctx, const v1::FlowWaitRequest* req, v1::Flow* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kFlow, [this, req, resp](Unary* r, const domain::Caller&) {
    svc_.flows.Wait(req->id(), req->timeout_ms(), [this, r, resp](StatusOr<service::FlowView> v) {
      if (!v.ok()) return r->Finish(ToGrpc(v.status()));
      FlowToProto(v.value(), resp);
      FinishAfterCommit(r, Status::Ok());
    });
  });
}

Unary* ConclaveService::FlowCancel(CTX* ctx, const v1::FlowCancelRequest* req, v1::Flow* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kFlow, [this, req, resp](Unary* r, const domain::Caller&) {
    svc_.flows.Cancel(req->id(), IntoFlow(r, resp));
  });
}

Unary* ConclaveService::FlowClean(CTX* ctx, const v1::FlowCleanRequest* req,
                                  v1::FlowListReply* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kFlow, [this, req, resp](Unary* r, const domain::Caller&) {
    svc_.flows.Clean(req->id(), [r, resp](StatusOr<std::vector<service::FlowView>> v) {
      if (!v.ok()) return r->Finish(ToGrpc(v.status()));
      for (const auto& x : v.value()) FlowToProto(x, resp->add_flows());
      r->Finish(grpc::Status::OK);
    });
  });
}

}  // namespace conclave::api
