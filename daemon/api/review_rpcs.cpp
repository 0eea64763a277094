// ConclaveService: review RPCs and the Phase 0 report.

#include "api/conclave_service.h"
#include "api/proto_convert.h"

namespace conclave::api {
namespace {

std::function<void(StatusOr<service::ReviewView>)> IntoReview(Unary* r, v1::Review* resp) {
  return [r, resp](StatusOr<service::ReviewView> v) {
    if (!v.ok()) return r->Finish(ToGrpc(v.status()));
    ToProto(v.value(), resp);
    r->Finish(grpc::Status::OK);
  };
}

void IntoReport(const service::ReportView& report, v1::ReportReply* resp) {
  for (const auto& p : report.profiles) {
    auto* out = resp->add_profiles();
    out->set_profile(p.profile);
    out->set_family(p.family);
    out->set_invocations(p.invocations);
    out->set_clean(p.clean);
    out->set_malformed(p.malformed);
    out->set_timed_out(p.timed_out);
    out->set_failed(p.failed);
    out->set_cost_usd(p.cost_usd);
  }
  for (const auto& [k, v] : report.unique_findings_per_family) {
    (*resp->mutable_unique_findings_per_family())[k] = v;
  }
  auto count = [&](const char* k) {
    auto it = report.terminations.find(k);
    return it == report.terminations.end() ? int64_t{0} : it->second;
  };
  resp->set_reviews(report.reviews);
  resp->set_converged(count("converged"));
  resp->set_no_movement(count("no_movement"));
  resp->set_cap_reached(count("cap_reached"));
  resp->set_json(report.json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace

Unary* ConclaveService::StartReview(CTX* ctx, const v1::StartReviewRequest* req, v1::Review* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kStartReview, [this, req, resp](Unary* r, const domain::Caller& caller) {
    service::StartReviewInput in;
    in.artifact = req->artifact();
    in.artifact_kind = req->artifact_kind();
    in.writer_family = req->writer_family();
    in.mode = req->mode();
    in.primary = req->primary();
    in.challengers.assign(req->challengers().begin(), req->challengers().end());
    in.cap = req->cap();
    in.budget_usd = req->budget_usd();
    in.session = req->session();
    in.idem_key = req->idempotency_key();
    in.coordinator = req->coordinator();
    if (req->has_max_fix_rounds()) in.max_fix_rounds = req->max_fix_rounds();
    in.repo = req->repo();
    in.commit = req->commit();
    in.measure = req->measure();
    svc_.reviews.Start(std::move(in), IntoReview(r, resp));
  });
}

Unary* ConclaveService::GetReview(CTX* ctx, const v1::GetReviewRequest* req, v1::Review* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kGetReview, [this, req, resp](Unary* r, const domain::Caller& caller) {
    auto v = svc_.reviews.Get(req->id());
    if (!v.ok()) return r->Finish(ToGrpc(v.status()));
    ToProto(v.value(), resp);
    FinishAfterCommit(r, Status::Ok());
  });
}

Unary* ConclaveService::ListReviews(CTX* ctx, const v1::ListReviewsRequest* req,
                                    v1::ListReviewsReply* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kListReviews, [this, req, resp](Unary* r, const domain::Caller& caller) {
    for (const auto& v : svc_.reviews.List(req->limit())) ToProto(v, resp->add_reviews());
    FinishAfterCommit(r, Status::Ok());
  });
}

Unary* ConclaveService::WaitReview(CTX* ctx, const v1::WaitReviewRequest* req, v1::Review* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kWaitReview, [this, req, resp](Unary* r, const domain::Caller& caller) {
    svc_.reviews.Wait(req->id(), req->timeout_ms(), [this, r, resp](StatusOr<service::ReviewView> v) {
      if (!v.ok()) return r->Finish(ToGrpc(v.status()));
      ToProto(v.value(), resp);
      FinishAfterCommit(r, Status::Ok());
    });
  });
}

Unary* ConclaveService::Regate(CTX* ctx, const v1::RegateRequest* req, v1::Review* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kRegate, [this, req, resp](Unary* r, const domain::Caller& caller) {
    service::RegateInput in;
    in.artifact = req->artifact();
    in.retry_absent = req->retry_absent();
    if (req->has_max_fix_rounds()) in.max_fix_rounds = req->max_fix_rounds();
    svc_.reviews.Regate(req->id(), std::move(in), IntoReview(r, resp));
  });
}

Unary* ConclaveService::Report(CTX* ctx, const v1::ReportRequest* req, v1::ReportReply* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kReport, [this, req, resp](Unary* r, const domain::Caller& caller) {
    // Built off the loop (service::SnapshotReader) from committed state; answered on the loop
    // in a later turn, outside OnLoop's catch, so it catches its own.
    svc_.reviews.Report(req->since_unix_ms(), [resp, r](StatusOr<service::ReportView> built) {
      if (!built.ok()) return r->Finish(ToGrpc(built.status()));
      try {
        IntoReport(*built, resp);
      } catch (const std::exception& e) {
        return r->Finish(grpc::Status(grpc::StatusCode::INTERNAL, e.what()));
      }
      r->Finish(grpc::Status::OK);
    });
  });
}

Unary* ConclaveService::Doctor(CTX* ctx, const v1::DoctorRequest* req, v1::DoctorReply* resp) {
  return OnLoop(ctx, *req, domain::Rpc::kDoctor, [this, resp](Unary* r, const domain::Caller& caller) {
    for (const auto& e : svc_.ProfileErrors()) {
      auto* out = resp->add_errors();
      out->set_file(e.file);
      out->set_field(e.field);
      out->set_error(e.error);
    }
    svc_.doctor.Run([r, resp](StatusOr<service::DoctorReport> report) {
      if (!report.ok()) return r->Finish(ToGrpc(report.status()));
      resp->set_sandbox(report->sandbox);
      for (const auto& w : report->daemon_warnings) resp->add_daemon_warnings(w);
      for (const auto& c : report->profiles) {
        auto* out = resp->add_profiles();
        out->set_profile(c.profile);
        out->set_family(c.family);
        out->set_ready(c.ready());
        out->set_program(c.program);
        out->set_program_path(c.program_path);
        out->set_version(c.version);
        for (const auto& x : c.ok) out->add_ok(x);
        for (const auto& x : c.problems) out->add_problems(x);
        for (const auto& x : c.fixes) out->add_fixes(x);
        for (const auto& x : c.advice) out->add_advice(x);
        for (const auto& x : c.warnings) out->add_warnings(x);
      }
      r->Finish(grpc::Status::OK);
    });
  });
}

}  // namespace conclave::api
