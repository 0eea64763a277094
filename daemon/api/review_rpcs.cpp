// ConclaveService: review RPCs and the Phase 0 report.
#include <nlohmann/json.hpp>

#include "api/conclave_service.h"
#include "api/proto_convert.h"
#include "service/doctor.h"

namespace conclave::api {
namespace {

void FillFinding(const nlohmann::json& f, v1::Finding* out) {
  out->set_id(f.value("id", ""));
  out->set_severity(f.value("severity", ""));
  out->set_category(f.value("category", ""));
  if (f.contains("location") && f["location"].is_object()) {
    out->set_path(f["location"].value("path", ""));
    out->set_line(f["location"].value("line", 0));
  }
  out->set_title(f.value("title", ""));
  out->set_detail(f.value("detail", ""));
  out->set_stance(f.value("stance", ""));
  if (f.contains("refs") && f["refs"].is_array()) {
    for (const auto& r : f["refs"]) {
      if (r.is_string()) out->add_refs(r.get<std::string>());
    }
  }
  out->set_family(f.value("family", ""));
  out->set_round(f.value("round", 0));
  out->set_foreign(f.value("foreign", false));
  out->set_disposition(f.value("disposition", ""));
  out->set_open(f.value("open", true));
  out->set_profile(f.value("profile", ""));
}

void FillReview(const service::ReviewView& v, v1::Review* out) {
  const auto& r = v.review;
  out->set_id(r.id);
  out->set_mode(r.mode);
  out->set_writer_family(r.writer_family);
  out->set_artifact_kind(r.artifact_kind);
  out->set_status(r.status);
  out->set_verdict(r.verdict);
  out->set_termination(r.termination);
  out->set_reason(r.reason);
  out->set_cap(r.cap);
  out->set_session(r.session);
  out->set_cost_usd(v.cost_usd);
  out->set_revision(r.revision);
  out->set_gate_id(r.gate_id);
  out->set_blocked_by(r.blocked_by);
  out->set_created_unix_ms(r.created_ms);
  out->set_idempotency_key(r.idem_key);
  out->set_artifact_sha(r.artifact_sha);
  for (const auto& x : v.rounds) {
    auto* round = out->add_rounds();
    round->set_round(x.round);
    round->set_role(x.role);
    round->set_profile(x.profile);
    round->set_family(x.family);
    round->set_task_id(x.task_id);
    round->set_state(x.state + (x.revision != r.revision ? " (rev " + std::to_string(x.revision) + ")" : ""));
    round->set_malformed(x.malformed > 0);
    round->set_cost_usd(x.cost_usd);
    auto fs = nlohmann::json::parse(x.findings, nullptr, false);
    if (fs.is_array()) {
      for (const auto& f : fs) {
        auto* pf = round->add_findings();
        FillFinding(f, pf);
        pf->set_family(x.family);
        pf->set_round(x.round);
        pf->set_profile(x.profile);
        pf->set_foreign(x.family != r.writer_family);
      }
    }
  }
  auto fs = nlohmann::json::parse(r.findings, nullptr, false);
  if (fs.is_array()) {
    for (const auto& f : fs) FillFinding(f, out->add_findings());
  }
}

std::function<void(StatusOr<service::ReviewView>)> IntoReview(Unary* r, v1::Review* resp) {
  return [r, resp](StatusOr<service::ReviewView> v) {
    if (!v.ok()) return r->Finish(ToGrpc(v.status()));
    FillReview(v.value(), resp);
    r->Finish(grpc::Status::OK);
  };
}

}  // namespace

Unary* ConclaveService::StartReview(CTX* ctx, const v1::StartReviewRequest* req, v1::Review* resp) {
  return OnLoop(ctx, [this, req, resp](Unary* r) {
    service::StartReviewInput in;
    in.artifact = req->artifact();
    in.artifact_kind = req->artifact_kind().empty() ? "diff" : req->artifact_kind();
    in.writer_family = req->writer_family();
    in.mode = req->mode();
    in.primary = req->primary();
    in.challengers.assign(req->challengers().begin(), req->challengers().end());
    in.cap = req->cap();
    in.budget_usd = req->budget_usd();
    in.session = req->session();
    in.idem_key = req->idempotency_key();
    in.coordinator = req->coordinator();
    svc_.reviews.Start(std::move(in), IntoReview(r, resp));
  });
}

Unary* ConclaveService::GetReview(CTX* ctx, const v1::GetReviewRequest* req, v1::Review* resp) {
  return OnLoop(ctx, [this, req, resp](Unary* r) {
    auto v = svc_.reviews.Get(req->id());
    if (!v.ok()) return r->Finish(ToGrpc(v.status()));
    FillReview(v.value(), resp);
    FinishAfterCommit(r, Status::Ok());
  });
}

Unary* ConclaveService::ListReviews(CTX* ctx, const v1::ListReviewsRequest* req,
                                    v1::ListReviewsReply* resp) {
  return OnLoop(ctx, [this, req, resp](Unary* r) {
    for (const auto& v : svc_.reviews.List(req->limit())) FillReview(v, resp->add_reviews());
    FinishAfterCommit(r, Status::Ok());
  });
}

Unary* ConclaveService::WaitReview(CTX* ctx, const v1::WaitReviewRequest* req, v1::Review* resp) {
  return OnLoop(ctx, [this, req, resp](Unary* r) {
    svc_.reviews.Wait(req->id(), req->timeout_ms(), [this, r, resp](StatusOr<service::ReviewView> v) {
      if (!v.ok()) return r->Finish(ToGrpc(v.status()));
      FillReview(v.value(), resp);
      FinishAfterCommit(r, Status::Ok());
    });
  });
}

Unary* ConclaveService::Regate(CTX* ctx, const v1::RegateRequest* req, v1::Review* resp) {
  return OnLoop(ctx, [this, req, resp](Unary* r) {
    svc_.reviews.Regate(req->id(), req->artifact(), IntoReview(r, resp));
  });
}

Unary* ConclaveService::Report(CTX* ctx, const v1::ReportRequest* req, v1::ReportReply* resp) {
  return OnLoop(ctx, [this, req, resp](Unary* r) {
    auto j = svc_.reviews.Report(req->since_unix_ms());
    for (const auto& p : j["profiles"]) {
      auto* out = resp->add_profiles();
      out->set_profile(p["profile"]);
      out->set_family(p["family"]);
      out->set_invocations(p["invocations"]);
      out->set_clean(p["clean"]);
      out->set_malformed(p["malformed"]);
      out->set_timed_out(p["timed_out"]);
      out->set_failed(p["failed"]);
      out->set_cost_usd(p["cost_usd"]);
    }
    for (const auto& [k, v] : j["unique_findings_per_family"].items()) {
      (*resp->mutable_unique_findings_per_family())[k] = v.get<int64_t>();
    }
    resp->set_reviews(j["reviews"]);
    resp->set_converged(j["terminations"].value("converged", 0));
    resp->set_no_movement(j["terminations"].value("no_movement", 0));
    resp->set_cap_reached(j["terminations"].value("cap_reached", 0));
    resp->set_json(j.dump());
    FinishAfterCommit(r, Status::Ok());
  });
}

Unary* ConclaveService::Doctor(CTX* ctx, const v1::DoctorRequest*, v1::DoctorReply* resp) {
  return OnLoop(ctx, [this, resp](Unary* r) {
    for (const auto& e : svc_.core.profiles.errors) {
      auto* out = resp->add_errors();
      out->set_file(e.file);
      out->set_field(e.field);
      out->set_error(e.error);
    }
    service::RunDoctor(svc_.core, [r, resp](StatusOr<std::vector<service::ProfileCheck>> checks) {
      if (!checks.ok()) return r->Finish(ToGrpc(checks.status()));
      for (const auto& c : checks.value()) {
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
      }
      r->Finish(grpc::Status::OK);
    });
  });
}

}  // namespace conclave::api
