#include "api/proto_convert.h"

#include <nlohmann/json.hpp>

namespace conclave::api {

grpc::Status ToGrpc(const Status& s) {
  using grpc::StatusCode;
  StatusCode code = StatusCode::UNKNOWN;
  switch (s.code()) {
    case Code::kOk: return grpc::Status::OK;
    case Code::kInvalidArgument: code = StatusCode::INVALID_ARGUMENT; break;
    case Code::kNotFound: code = StatusCode::NOT_FOUND; break;
    case Code::kAlreadyExists: code = StatusCode::ALREADY_EXISTS; break;
    case Code::kFailedPrecondition: code = StatusCode::FAILED_PRECONDITION; break;
    case Code::kResourceExhausted: code = StatusCode::RESOURCE_EXHAUSTED; break;
    case Code::kPermissionDenied: code = StatusCode::PERMISSION_DENIED; break;
    case Code::kUnauthenticated: code = StatusCode::UNAUTHENTICATED; break;
    case Code::kUnavailable: code = StatusCode::UNAVAILABLE; break;
    case Code::kInternal: code = StatusCode::INTERNAL; break;
  }
  return grpc::Status(code, s.message());
}

void ToProto(const domain::MessageRecord& m, v1::Message* out) {
  out->set_seq(m.seq);
  out->set_created_unix_ms(m.created_ms);
  out->set_type(m.type);
  out->set_priority(m.priority);
  out->set_from(m.from);
  out->set_to(m.to);
  out->set_subject(m.subject);
  out->set_body(m.body);
  out->set_payload_json(m.payload);
  out->set_task_id(m.task_id);
  out->set_dispatch_id(m.dispatch_id);
  out->set_thread_id(m.thread_id);
  out->set_reply_to(m.reply_to);
  out->set_read(m.read);
}

domain::MessageRecord FromProto(const v1::SendRequest& r) {
  domain::MessageRecord m;
  m.type = r.type();
  m.priority = r.priority().empty() ? "normal" : r.priority();
  m.from = r.from();
  m.subject = r.subject();
  m.body = r.body();
  m.payload = r.payload_json();
  m.task_id = r.task_id();
  m.dispatch_id = r.dispatch_id();
  m.thread_id = r.thread_id();
  return m;
}

void ToProto(const store::HandleRecord& h, v1::Handle* out) {
  out->set_name(h.name);
  out->set_kind(h.kind);
  out->set_created_unix_ms(h.created_ms);
}

void ToProto(const store::TerminalRecord& t, const std::string& family, v1::Terminal* out) {
  out->set_handle(t.handle);
  out->set_profile(t.profile);
  out->set_family(family);
  out->set_cwd(t.cwd);
  out->set_state(t.state);
  out->set_active_dispatch_id(t.active_dispatch);
  out->set_created_unix_ms(t.created_ms);
}

void ToProto(const store::TaskRecord& t, const std::vector<int64_t>& deps, double spent,
             v1::Task* out) {
  out->set_id(t.id);
  out->set_title(t.title);
  out->set_brief(t.brief);
  out->set_status(t.status);
  out->set_role(t.role);
  out->set_hypothesis(t.hypothesis);
  out->set_scope(t.scope);
  out->set_validation(t.validation);
  for (int64_t d : deps) out->add_deps(d);
  out->set_idempotency_key(t.idem_key);
  out->set_blocked_reason(t.blocked_reason);
  out->set_result_json(t.result);
  out->set_created_unix_ms(t.created_ms);
  out->set_updated_unix_ms(t.updated_ms);
  out->set_auto_retry(t.auto_retry);
  out->set_coordinator(t.coordinator);
  out->set_session(t.session);
  out->set_budget_usd(t.budget_usd);
  out->set_spent_usd(spent);
  out->set_breaker_count(t.breaker_count);
  out->set_breaker_fingerprint(t.breaker_fp);
}

void ToProto(const store::DispatchRecord& d, v1::DispatchInfo* out) {
  out->set_id(d.id);
  out->set_task_id(d.task_id);
  out->set_terminal(d.terminal);
  out->set_profile(d.profile);
  out->set_family(d.family);
  out->set_state(d.state);
  out->set_attempt(d.attempt);
  out->set_pid(d.pid);
  out->set_started_unix_ms(d.started_ms);
  out->set_finished_unix_ms(d.finished_ms);
  out->set_exit_code(d.exit_code);
  out->set_failure_kind(d.failure_kind);
  out->set_failure_class(d.failure_class);
  out->set_fingerprint(d.fingerprint);
  out->set_evidence(d.evidence);
  out->set_cost_usd(d.cost_usd);
  out->set_cost_estimated(d.cost_estimated);
  out->set_result_json(d.result);
  out->set_last_output_unix_ms(d.last_output_ms);
  out->set_deadline_unix_ms(d.deadline_ms);
  out->set_target(d.target);
  out->set_not_before_unix_ms(d.not_before_ms);
}

void ToProto(const store::GateRecord& g, v1::Gate* out) {
  out->set_id(g.id);
  out->set_task_id(g.task_id);
  out->set_review_id(g.review_id);
  out->set_question(g.question);
  auto opts = nlohmann::json::parse(g.options, nullptr, false);
  if (opts.is_array()) {
    for (const auto& o : opts) {
      if (o.is_string()) out->add_options(o.get<std::string>());
    }
  }
  out->set_status(g.status);
  out->set_decision(g.decision);
  out->set_created_unix_ms(g.created_ms);
  out->set_resolved_unix_ms(g.resolved_ms);
}

void ToProto(const exec::Profile& p, v1::Profile* out) {
  out->set_name(p.name);
  out->set_family(p.family);
  for (const auto& c : p.command) out->add_command(c);
  out->set_brief(p.brief);
  out->set_parser(p.parser);
  out->set_timeout_s(p.timeout_s);
  out->set_idle_timeout_s(p.idle_timeout_s);
  out->set_max_concurrent(p.max_concurrent);
  out->set_source_file(p.source_file);
  out->set_isolate_home(p.isolate_home);
  out->set_template_name(p.template_name);
}

}  // namespace conclave::api
