// conclave review start|show|wait|list|gate|regate, conclave doctor and conclave report.
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>

#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"

namespace conclave::client {
namespace {

void PrintReview(const v1::Review& r, bool detail) {
  std::cout << "review " << r.id() << " [" << r.mode() << "] writer " << r.writer_family() << " rev "
            << r.revision() << ": " << r.status();
  if (!r.verdict().empty()) std::cout << " → " << r.verdict();
  if (!r.termination().empty()) std::cout << " (" << r.termination() << ")";
  if (!r.blocked_by().empty()) std::cout << " blocked_by: " << r.blocked_by();
  std::cout << "\n";
  if (!detail) return;
  if (!r.reason().empty()) std::cout << "  why: " << r.reason() << "\n";
  std::cout << "  cost $" << r.cost_usd() << ", cap " << r.cap() << ", session " << r.session()
            << ", fix rounds " << r.fix_rounds() << "/" << r.max_fix_rounds()
            << (r.measure() ? ", measured" : "") << "\n";
  if (!r.repo().empty()) std::cout << "  repository " << r.repo() << " at " << r.commit() << "\n";
  for (const auto& round : r.rounds()) {
    std::cout << "  round " << round.round() << " " << round.role() << " " << round.profile() << " ("
              << round.family() << (round.model().empty() ? "" : ", " + round.model()) << ") "
              << round.state() << (round.malformed() ? " [malformed]" : "") << " task "
              << round.task_id() << "\n";
    if (!round.error().empty()) std::cout << "    error: " << round.error() << "\n";
    for (const auto& f : round.findings()) {
      std::cout << "    " << f.id() << " " << f.stance() << " " << f.severity() << " " << f.category()
                << " " << f.path() << ":" << f.line() << " " << f.title() << "\n";
    }
  }
  if (r.findings_size()) std::cout << "  reconciled:\n";
  for (const auto& f : r.findings()) {
    std::cout << "    " << (f.open() ? "OPEN   " : "closed ") << f.id() << " " << f.severity() << " "
              << f.category() << " " << f.path() << ":" << f.line() << " — " << f.title() << " ["
              << f.family() << (f.foreign() ? ", foreign" : ", same-family") << ", round "
              << f.round() << ", " << f.disposition() << (f.carried() ? ", carried" : "") << "]\n";
    for (const auto& a : f.answers()) std::cout << "      answered " << a << "\n";
  }
  for (const auto& s : r.signoffs()) {
    std::cout << "  sign-off on gate " << s.gate_id() << ": " << s.decision() << " by uid "
              << s.caller_uid() << " pid " << s.caller_pid() << " (" << s.caller_exe() << ", "
              << (s.human() ? "terminal " + s.caller_tty() : std::string("no terminal")) << ") — "
              << s.verdict_before() << " → " << s.verdict_after()
              << (s.reason().empty() ? "" : ": " + s.reason()) << "\n";
  }
  if (r.gate_id()) std::cout << "  decision gate " << r.gate_id() << " (conclave gate list)\n";
}

int64_t ParseSince(const std::string& s) {
  if (s.empty()) return 0;
  char unit = s.back();
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  if (unit == 'h' || unit == 'd' || unit == 'm') {
    int64_t n = std::stoll(s.substr(0, s.size() - 1));
    int64_t mult = unit == 'h' ? 3600000 : unit == 'd' ? 86400000 : 60000;
    return now - n * mult;
  }
  return std::stoll(s);
}

}  // namespace

void AddReviewCommands(CLI::App& app, Options& opts, int* rc) {
  using S = v1::Conclave::Stub;
  auto* review = app.add_subcommand("review", "cross-family adversarial reviews");
  review->require_subcommand(1);
  struct Args {
    std::string artifact, kind = "diff", writer, mode = "ordinary", primary, session, key, since;
    std::string repo, commit;
    std::vector<std::string> challengers;
    int cap = -1, max_fix_rounds = -1;
    double budget = 0;
    int64_t id = 0, timeout_ms = 600000;
    int limit = 50;
    bool measure = false, retry_absent = false, accept_signoff = false;
  };
  auto a = std::make_shared<Args>();
  auto* start = review->add_subcommand("start", "start a review of an artifact");
  start->add_option("--artifact", a->artifact, "file, or - for stdin")
      ->required()
      ->type_name("FILE");
  start->add_option("--artifact-kind", a->kind, "diff|code|doc|spec");
  start->add_option("--writer-family", a->writer, "family of the model that wrote it")->required();
  auto* mode_opt = start->add_option("--mode", a->mode, "mechanical|simple|ordinary|strong|debate");
  start->add_option("--primary", a->primary, "same-source primary profile (debate)");
  start->add_option("--challenger", a->challengers, "challenger profile (repeatable)");
  start->add_option("--cap", a->cap, "challenger invocations (0 = none; default from config)");
  start->add_option("--budget-usd", a->budget, "spend cap for the whole review");
  start->add_option("--session", a->session,
                    "coordinator session (one Strong per session; default CONCLAVE_SESSION)");
  start->add_option("--key", a->key, "idempotency key");
  start->add_option("--max-fix-rounds", a->max_fix_rounds,
                    "re-gates with a new artifact before one escalates (default from config)");
  start->add_option("--repo", a->repo, "repository (absolute path) the reviewers get read-only");
  start->add_option("--commit", a->commit, "commit of --repo to review (default HEAD)");
  start->add_flag("--measure", a->measure,
                  "Phase 0: same-source and foreign reviewer run independently (debate mode)");
  start->callback([&opts, rc, a, mode_opt] {
    Client c(opts);
    v1::StartReviewRequest req;
    std::string artifact;
    if (!ReadInput(a->artifact, &artifact)) {
      *rc = kExitUsage;
      return;
    }
    req.set_artifact(artifact);
    req.set_artifact_kind(a->kind);
    req.set_writer_family(a->writer);
    req.set_mode(a->measure && mode_opt->count() == 0 ? std::string("debate") : a->mode);
    req.set_primary(a->primary);
    for (const auto& ch : a->challengers) req.add_challengers(ch);
    req.set_cap(a->cap);
    req.set_budget_usd(a->budget);
    std::string session = a->session;
    if (session.empty()) {
      const char* env = std::getenv("CONCLAVE_SESSION");
      if (env) session = env;
    }
    req.set_session(session);
    req.set_idempotency_key(a->key);
    if (a->max_fix_rounds >= 0) req.set_max_fix_rounds(a->max_fix_rounds);
    req.set_repo(a->repo);
    req.set_commit(a->commit);
    req.set_measure(a->measure);
    v1::Review r;
    if (!Call(c, &S::StartReview, req, &r, rc, 180000)) return;
    if (c.json()) return PrintJson(r);
    PrintReview(r, false);
  });
  auto* show = review->add_subcommand("show", "rounds, findings with provenance, verdict, cost");
  show->add_option("id", a->id)->required();
  show->callback([&opts, rc, a] {
    Client c(opts);
    v1::GetReviewRequest req;
    req.set_id(a->id);
    v1::Review r;
    if (!Call(c, &S::GetReview, req, &r, rc)) return;
    if (c.json()) return PrintJson(r);
    PrintReview(r, true);
  });
  auto* wait = review->add_subcommand("wait", "block until the review has a verdict (exit 4 on timeout)");
  wait->add_option("id", a->id)->required();
  wait->add_option("--timeout-ms", a->timeout_ms, "default 600000");
  wait->callback([&opts, rc, a] {
    Client c(opts);
    v1::WaitReviewRequest req;
    req.set_id(a->id);
    req.set_timeout_ms(a->timeout_ms);
    v1::Review r;
    auto ctx = c.Context(a->timeout_ms + 15000);
    auto s = c.stub().WaitReview(ctx.get(), req, &r);
    if (!s.ok()) return void(*rc = c.Fail(s, ctx.get()));
    if (c.json()) PrintJson(r); else PrintReview(r, true);
    if (r.status() != "done") *rc = kExitTimeout;
  });
  auto* list = review->add_subcommand("list", "recent reviews");
  list->add_option("--limit", a->limit);
  list->callback([&opts, rc, a] {
    Client c(opts);
    v1::ListReviewsRequest req;
    req.set_limit(a->limit);
    v1::ListReviewsReply r;
    if (!Call(c, &S::ListReviews, req, &r, rc)) return;
    if (c.json()) return PrintJson(r);
    for (const auto& x : r.reviews()) PrintReview(x, false);
  });
  auto* gate = review->add_subcommand(
      "gate", "the merge gate: exit 0 only when the verdict is APPROVED (5 otherwise)");
  gate->add_option("id", a->id)->required();
  gate->add_flag("--accept-signoff", a->accept_signoff,
                 "also exit 0 for APPROVED_BY_SIGNOFF (a human's sign-off on the review's gate)");
  gate->callback([&opts, rc, a] {
    Client c(opts);
    v1::GetReviewRequest req;
    req.set_id(a->id);
    v1::Review r;
    if (!Call(c, &S::GetReview, req, &r, rc)) return;
    if (c.json()) PrintJson(r);
    if (r.status() == "done" && r.verdict() == "APPROVED") {
      if (!c.json()) std::cout << "APPROVED: review " << r.id() << " rev " << r.revision() << "\n";
      return;
    }
    if (r.status() == "done" && r.verdict() == "APPROVED_BY_SIGNOFF" && a->accept_signoff) {
      std::string who;
      for (const auto& s : r.signoffs()) {
        if (s.verdict_after() == "APPROVED_BY_SIGNOFF") {
          who = "uid " + std::to_string(s.caller_uid()) + " at " + s.caller_tty() +
                (s.reason().empty() ? "" : ": " + s.reason());
        }
      }
      // stderr under --json keeps stdout one JSON document.
      (c.json() ? std::cerr : std::cout)
          << "APPROVED_BY_SIGNOFF: review " << r.id() << " rev " << r.revision()
          << " was not approved by its reviewers; a human decided to accept it (" << who << ")\n";
      return;
    }
    std::string why = r.status() != "done" ? "the review has no verdict yet (still running)"
                                           : r.verdict() + ": " + r.reason();
    std::cerr << "gate closed: review " << r.id() << ": " << why << "\n";
    for (const auto& f : r.findings()) {
      if (f.open()) {
        std::cerr << "  open " << f.severity() << " " << f.id() << " " << f.path() << ":" << f.line()
                  << " " << f.title() << " [" << f.family() << "]\n";
      }
    }
    *rc = kExitGateNotApproved;
  });
  auto* regate = review->add_subcommand("regate", "review a new revision of the artifact afresh");
  regate->add_option("id", a->id)->required();
  regate->add_option("--artifact", a->artifact, "file, or - for stdin")
      ->required()
      ->type_name("FILE");
  regate->add_flag("--retry-absent", a->retry_absent,
                   "after a gate-absent verdict: run the same artifact again");
  regate->add_option("--max-fix-rounds", a->max_fix_rounds, "a new fix-round limit for the review");
  regate->callback([&opts, rc, a] {
    Client c(opts);
    v1::RegateRequest req;
    req.set_id(a->id);
    std::string artifact;
    if (!ReadInput(a->artifact, &artifact)) {
      *rc = kExitUsage;
      return;
    }
    req.set_artifact(artifact);
    req.set_retry_absent(a->retry_absent);
    if (a->max_fix_rounds >= 0) req.set_max_fix_rounds(a->max_fix_rounds);
    v1::Review r;
    if (!Call(c, &S::Regate, req, &r, rc)) return;
    if (c.json()) return PrintJson(r);
    PrintReview(r, false);
  });

  auto* doctor = app.add_subcommand(
      "doctor", "check each profile: CLI on PATH, credentials present, endpoint (exit 1 if any "
                "is not ready)");
  doctor->callback([&opts, rc] {
    Client c(opts);
    v1::DoctorReply r;
    auto ctx = c.Context(120000);
    auto s = c.stub().Doctor(ctx.get(), v1::DoctorRequest(), &r);
    if (!s.ok()) return void(*rc = c.Fail(s, ctx.get()));
    bool all = true;
    for (const auto& p : r.profiles()) all &= p.ready();
    if (!r.errors().empty()) all = false;
    if (c.json()) {
      PrintJson(r);
    } else {
      if (!r.sandbox().empty()) std::cout << "sandbox: " << r.sandbox() << "\n";
      for (const auto& w : r.daemon_warnings()) std::cout << "DAEMON    warn " << w << "\n";
      for (const auto& p : r.profiles()) {
        std::cout << (p.ready() ? "READY     " : "NOT READY ") << p.profile() << " (" << p.family()
                  << ")" << (p.version().empty() ? "" : "  " + p.version()) << "\n";
        for (const auto& x : p.ok()) std::cout << "    ok   " << x << "\n";
        for (int i = 0; i < p.problems_size(); ++i) {
          std::cout << "    MISSING " << p.problems(i) << "\n";
          if (i < p.fixes_size()) std::cout << "      fix: " << p.fixes(i) << "\n";
        }
        for (const auto& x : p.advice()) std::cout << "    advice " << x << "\n";
        for (const auto& w : p.warnings()) std::cout << "    warn " << w << "\n";
      }
      for (const auto& e : r.errors()) {
        std::cout << "INVALID   " << e.file() << (e.field().empty() ? "" : " (" + e.field() + ")")
                  << ": " << e.error() << "\n";
      }
    }
    if (!all) *rc = kExitError;
  });

  auto* report = app.add_subcommand("report", "Phase 0 figures: reliability, incremental value, convergence");
  report->add_option("--since", a->since, "unix ms, or a window like 24h / 7d");
  report->callback([&opts, rc, a] {
    Client c(opts);
    v1::ReportRequest req;
    try {
      req.set_since_unix_ms(ParseSince(a->since));
    } catch (...) {
      std::cerr << "conclave: report: --since must be unix ms or like 24h, 7d, 90m\n";
      *rc = kExitUsage;
      return;
    }
    v1::ReportReply r;
    if (!Call(c, &S::Report, req, &r, rc)) return;
    if (c.json()) {
      std::cout << r.json() << "\n";
      return;
    }
    std::cout << "tool-call reliability per profile\n";
    std::cout << std::left << std::setw(18) << "profile" << std::setw(12) << "family" << std::setw(8)
              << "calls" << std::setw(8) << "clean" << std::setw(10) << "malformed" << std::setw(10)
              << "timeout" << "cost\n";
    for (const auto& p : r.profiles()) {
      std::cout << std::left << std::setw(18) << p.profile() << std::setw(12) << p.family()
                << std::setw(8) << p.invocations() << std::setw(8) << p.clean() << std::setw(10)
                << p.malformed() << std::setw(10) << p.timed_out() << "$" << p.cost_usd() << "\n";
    }
    std::cout << "\nunique findings per family (materially different)\n";
    for (const auto& [f, n] : std::map<std::string, int64_t>(r.unique_findings_per_family().begin(),
                                                             r.unique_findings_per_family().end())) {
      std::cout << "  " << f << ": " << n << "\n";
    }
    auto j = nlohmann::json::parse(r.json(), nullptr, false);
    auto rate = [&](const nlohmann::json& x) {
      std::ostringstream o;
      o << x.value("numerator", 0) << "/" << x.value("denominator", 0) << " " << x.value("of", "");
      return o.str();
    };
    if (!j.is_object()) return;
    std::cout << "\nreviews " << r.reviews() << ", counted " << j.value("reviews_counted", 0)
              << " (mechanical and gate-absent reviews are left out of the findings figures)\n";
    const auto& iv = j["incremental_value"];
    std::cout << "incremental value: " << iv.value("foreign_only", 0) << " found only by the foreign "
              << "side, " << iv.value("same_source_only", 0) << " only by the same-source side, "
              << iv.value("both", 0) << " by both, over " << iv.value("reviews", 0) << " reviews\n";
    std::cout << "debates " << j["debates"].value("count", 0) << ": converged " << r.converged()
              << ", no_movement " << r.no_movement() << ", cap_reached " << r.cap_reached() << "\n";
    std::cout << "rubber-stamp rate: " << rate(j["rubber_stamp"]) << "\n";
    if (j.contains("flows") && j["flows"].value("count", 0) > 0) {
      const auto& fl = j["flows"];
      std::cout << "\nflows " << fl.value("count", 0) << ": ";
      for (const auto& [status, n] : fl["by_status"].items()) std::cout << status << " " << n << "  ";
      std::cout << "\nfirst-pass verify: " << rate(fl["first_pass_verify"]) << "; fix rounds "
                << fl["fix_rounds"].value("total", 0) << "; cost $" << fl.value("cost_usd", 0.0)
                << "\n";
      for (const auto& [step, ms] : fl["step_ms_total"].items()) {
        std::cout << "  time in " << step << ": " << ms.get<int64_t>() / 1000.0 << " s\n";
      }
    }
  });
}

}  // namespace conclave::client
