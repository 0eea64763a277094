#include "api/proto_convert.h"

#include "api/request_checks.h"

#include <nlohmann/json.hpp>

#include "domain/family.h"

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
  return grpc::Status(code, CapStatusMessage(s.message()));
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
  m.priority = r.priority();
  m.from = r.from();
  m.subject = r.subject();
  m.body = r.body();
  m.payload = r.payload_json();
  m.task_id = r.task_id();
  m.dispatch_id = r.dispatch_id();
  m.thread_id = r.thread_id();
  return m;
}

void ToProto(const domain::Handle& h, v1::Handle* out) {
  out->set_name(h.name);
  out->set_kind(h.kind);
  out->set_created_unix_ms(h.created_ms);
}

void ToProto(const service::TerminalView& v, v1::Terminal* out) {
  const domain::Terminal& t = v.terminal;
  out->set_handle(t.handle);
  out->set_profile(t.profile);
  out->set_family(v.family);
  out->set_cwd(t.cwd);
  out->set_state(std::string(domain::TerminalStateName(t.state)));
  out->set_active_dispatch_id(t.active_dispatch);
  out->set_created_unix_ms(t.created_ms);
  out->set_exclusive(t.exclusive);
}

void ToProto(const service::TaskView& v, v1::Task* out) {
  const domain::Task& t = v.task;
  out->set_id(t.id);
  out->set_title(t.title);
  out->set_brief(t.brief);
  out->set_status(std::string(domain::TaskStateName(t.status)));
  out->set_role(t.role);
  out->set_hypothesis(t.hypothesis);
  out->set_scope(t.scope);
  out->set_validation(t.validation);
  for (int64_t d : v.deps) out->add_deps(d);
  out->set_idempotency_key(t.idem_key);
  out->set_blocked_reason(t.blocked_reason);
  out->set_result_json(t.result);
  out->set_created_unix_ms(t.created_ms);
  out->set_updated_unix_ms(t.updated_ms);
  out->set_auto_retry(t.auto_retry);
  out->set_coordinator(t.coordinator);
  out->set_session(t.session);
  out->set_budget_usd(t.budget_usd);
  out->set_spent_usd(v.spent_usd);
  out->set_breaker_count(t.breaker_count);
  out->set_breaker_fingerprint(t.breaker_fp);
}

void ToProto(const domain::Dispatch& d, v1::DispatchInfo* out) {
  out->set_id(d.id);
  out->set_task_id(d.task_id);
  out->set_terminal(d.terminal);
  out->set_profile(d.profile);
  out->set_family(d.family);
  out->set_state(std::string(domain::DispatchStateName(d.state)));
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

void ToProto(const domain::Gate& g, v1::Gate* out) {
  out->set_id(g.id);
  out->set_task_id(g.task_id);
  out->set_review_id(g.review_id);
  out->set_flow_id(g.flow_id);
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
  out->set_role(f.value("role", ""));
  out->set_revision(f.value("revision", 0));
  out->set_carried(f.value("carried", false));
  if (f.contains("answers") && f["answers"].is_array()) {
    for (const auto& a : f["answers"]) {
      if (a.is_string()) out->add_answers(a.get<std::string>());
    }
  }
}

}  // namespace

void ToProto(const service::ReviewView& v, v1::Review* out) {
  const auto& r = v.review;
  out->set_id(r.id);
  out->set_mode(r.mode);
  out->set_writer_family(r.writer_family);
  out->set_artifact_kind(r.artifact_kind);
  out->set_status(std::string(domain::ReviewStatusName(r.status)));
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
  out->set_max_fix_rounds(r.max_fix_rounds);
  out->set_fix_rounds(r.fix_rounds);
  out->set_repo(r.repo);
  out->set_commit(r.repo_commit);
  out->set_measure(r.measure);
  for (const auto& s : v.signoffs) {
    auto* p = out->add_signoffs();
    p->set_gate_id(s.gate_id);
    p->set_revision(s.revision);
    p->set_decision(s.decision);
    p->set_reason(s.reason);
    p->set_human(s.human);
    p->set_caller_uid(s.caller.uid);
    p->set_caller_pid(s.caller.pid);
    p->set_caller_exe(s.caller.exe);
    p->set_caller_tty(s.caller.tty);
    p->set_caller_source(s.caller.source);
    p->set_verdict_before(s.verdict_before);
    p->set_verdict_after(s.verdict_after);
    p->set_created_unix_ms(s.created_ms);
  }
  for (const auto& x : v.rounds) {
    auto* round = out->add_rounds();
    round->set_round(x.round);
    round->set_role(x.role);
    round->set_profile(x.profile);
    round->set_family(x.family);
    round->set_task_id(x.task_id);
    round->set_state(std::string(domain::RoundStateName(x.state)) +
                     (x.revision != r.revision ? " (rev " + std::to_string(x.revision) + ")" : ""));
    round->set_malformed(x.malformed > 0);
    round->set_cost_usd(x.cost_usd);
    round->set_model(x.model);
    round->set_revision(x.revision);
    round->set_error(x.error);
    auto fs = nlohmann::json::parse(x.findings, nullptr, false);
    if (fs.is_array()) {
      for (const auto& f : fs) {
        auto* pf = round->add_findings();
        FillFinding(f, pf);
        pf->set_family(x.family);
        pf->set_round(x.round);
        pf->set_profile(x.profile);
        pf->set_foreign(domain::IsForeignFamily(x.family, r.writer_family));
        pf->set_role(x.role);
        pf->set_revision(x.revision);
      }
    }
  }
  auto fs = nlohmann::json::parse(r.findings, nullptr, false);
  if (fs.is_array()) {
    for (const auto& f : fs) FillFinding(f, out->add_findings());
  }
}


void ToProto(const service::ProfileView& p, v1::Profile* out) {
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
  out->set_running(p.running);
  if (p.cooldown_until_ms) out->set_cooldown_until_unix_ms(p.cooldown_until_ms);
}

void ToProto(const service::StatusView& s, v1::StatusReply* out) {
  out->set_version(s.version);
  out->set_uptime_ms(s.uptime_ms);
  out->set_pid(s.pid);
  out->set_state_dir(s.state_dir);
  out->set_database_path(s.database_path);
  out->set_listener(s.listener);
  out->set_last_seq(s.last_seq);
  out->set_schema_version(s.schema_version);
  out->set_profiles_dir(s.profiles_dir);
  out->set_allocator(s.allocator);
  out->set_sqlite(s.sqlite);
  for (const auto& [k, v] : s.counts) (*out->mutable_counts())[k] = v;
  for (const auto& c : s.cooldowns) {
    auto* p = out->add_cooldowns();
    p->set_profile(c.profile);
    p->set_until_unix_ms(c.until_ms);
    p->set_reason(c.reason);
  }
  auto* disk = out->mutable_disk();
  disk->set_state_bytes(s.disk.state_bytes);
  disk->set_dispatch_bytes(s.disk.dispatch_bytes);
  disk->set_database_bytes(s.disk.database_bytes);
  disk->set_free_bytes(s.disk.free_bytes);
  disk->set_measured_unix_ms(s.disk.measured_ms);
  disk->set_removed_dispatch_dirs(s.disk.removed_dispatch_dirs);
  disk->set_removed_messages(s.disk.removed_messages);
  for (const auto& line : s.spend) {
    auto* p = out->add_spend();
    p->set_cap(line.cap);
    p->set_spent_usd(line.spent);
    p->set_cap_usd(line.cap_usd);
  }
}

}  // namespace conclave::api
