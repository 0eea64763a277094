// conclave flow start|show|list|wait|cancel|clean: daemon-driven flows (worktree → implement →
// verify → review → ready). `flow wait` exits 0 on ready, 5 on needs_human / failed /
// cancelled, 4 on timeout.
#include <ctime>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"

namespace conclave::client {
namespace {

std::string Clock(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  char buf[32];
  std::strftime(buf, sizeof buf, "%H:%M:%S", std::gmtime(&t));
  return buf;
}

void PrintFlow(const v1::Flow& f, bool detail) {
  std::cout << "flow " << f.id() << " " << f.status();
  if (f.status() == "running") std::cout << " at " << f.step();
  std::cout << " round " << f.round() << " (fix " << f.fix_rounds() << "/" << f.max_fix_rounds()
            << ") " << f.branch();
  if (!f.title().empty()) std::cout << " — " << f.title();
  std::cout << "\n";
  if (!detail) {
    if (!f.note().empty()) std::cout << "  " << f.note() << "\n";
    return;
  }
  std::cout << "  repo " << f.repo() << " base " << f.base() << " "
            << f.base_sha().substr(0, 12) << "\n"
            << "  worktree " << f.worktree() << (f.cleaned() ? " (cleaned)" : "") << "\n"
            << "  writer " << f.writer() << " (" << f.writer_family() << "), review "
            << f.review_mode();
  for (const auto& r : f.reviewers()) std::cout << " " << r;
  std::cout << ", ship " << f.ship();
  if (f.budget_usd() > 0) std::cout << ", budget $" << f.budget_usd();
  std::cout << "\n";
  for (const auto& v : f.verify()) std::cout << "  verify: " << v << "\n";
  std::cout << "  dispatches: " << f.implement_runs() << " implement, " << f.verify_runs()
            << " verify; review " << f.review_id()
            << (f.review_verdict().empty() ? "" : " → " + f.review_verdict()) << "; cost $"
            << f.cost_usd() << "\n";
  auto ds = nlohmann::json::parse(f.dispatches_json(), nullptr, false);
  if (ds.is_array() && !ds.empty()) {
    std::cout << "  dispatch runs:\n";
    for (const auto& x : ds) {
      std::cout << "    r" << x.value("round", 0) << " " << x.value("step", "") << ": dispatch "
                << x.value("dispatch_id", int64_t{0}) << " on " << x.value("terminal", "") << " "
                << x.value("state", "")
                << (x.value("failure_kind", "").empty() ? "" : " (" + x.value("failure_kind", "") + ")")
                << "\n";
    }
  }
  auto h = nlohmann::json::parse(f.history_json(), nullptr, false);
  if (h.is_array()) {
    std::cout << "  steps:\n";
    for (const auto& e : h) {
      std::cout << "    " << Clock(e.value("at_ms", int64_t{0})) << " " << e.value("step", "")
                << " r" << e.value("round", 0) << ": " << e.value("note", "") << "\n";
    }
  }
  if (!f.last_error().empty()) std::cout << "  last error: " << f.last_error() << "\n";
  if (f.status() == "ready") std::cout << "  merge: " << f.merge_command() << "\n";
}

int ExitFor(const v1::Flow& f) {
  if (f.status() == "ready") return kExitOk;
  if (f.status() == "running") return kExitTimeout;
  return kExitGateNotApproved;
}

}  // namespace

void AddFlowCommands(CLI::App& app, Options& opts, int* rc) {
  using S = v1::Conclave::Stub;
  auto* flow = app.add_subcommand("flow", "daemon-driven flows: worktree → implement → verify → review");
  flow->require_subcommand(1);
  struct Args {
    std::string repo, brief, writer, base, title, review, key, ship = "none", status;
    std::vector<std::string> verify, reviewers;
    int cap = -1, max_fix_rounds = 2, limit = 50;
    int64_t id = 0, timeout_ms = 600000;
    double budget = 0;
  };
  auto a = std::make_shared<Args>();
  auto* start = flow->add_subcommand("start", "start a flow");
  start->add_option("--repo", a->repo, "the git repository")->required()->type_name("DIR");
  start->add_option("--brief", a->brief, "file, or - for stdin")->required()->type_name("FILE");
  start->add_option("--writer", a->writer, "writer profile")->required();
  start->add_option("--base", a->base, "base ref (default: the repo's current branch)");
  start->add_option("--title", a->title);
  start->add_option("--verify", a->verify, "a shell command run in the worktree (repeatable)");
  start->add_option("--review", a->review, "mechanical|simple|ordinary|strong|debate");
  start->add_option("--reviewer", a->reviewers, "reviewer profile (repeatable)");
  start->add_option("--cap", a->cap, "challenger invocations of the review");
  start->add_option("--budget-usd", a->budget, "what the flow's dispatches may spend in all (0 = no cap)");
  start->add_option("--max-fix-rounds", a->max_fix_rounds, "default 2");
  start->add_option("--key", a->key, "idempotency key");
  start->add_option("--ship", a->ship, "none|merge (fast-forward base when APPROVED)");
  start->callback([&opts, rc, a] {
    Client c(opts);
    v1::FlowStartRequest req;
    std::string brief;
    if (!ReadInput(a->brief, &brief)) {
      *rc = kExitUsage;
      return;
    }
    std::error_code ec;
    auto repo = std::filesystem::absolute(a->repo, ec);
    req.set_repo(ec ? a->repo : repo.lexically_normal().string());
    req.set_brief(brief);
    req.set_writer(a->writer);
    req.set_base(a->base);
    req.set_title(a->title);
    for (const auto& v : a->verify) req.add_verify(v);
    req.set_review_mode(a->review);
    for (const auto& r : a->reviewers) req.add_reviewers(r);
    req.set_cap(a->cap);
    req.set_budget_usd(a->budget);
    req.set_max_fix_rounds(a->max_fix_rounds);
    req.set_idempotency_key(a->key);
    req.set_ship(a->ship);
    v1::Flow f;
    if (!Call(c, &S::FlowStart, req, &f, rc)) return;
    if (c.json()) return PrintJson(f);
    PrintFlow(f, false);
  });
  auto* show = flow->add_subcommand("show", "steps with times, dispatches, verdict, branch");
  show->add_option("id", a->id)->required();
  show->callback([&opts, rc, a] {
    Client c(opts);
    v1::FlowShowRequest req;
    req.set_id(a->id);
    v1::Flow f;
    if (!Call(c, &S::FlowShow, req, &f, rc)) return;
    if (c.json()) return PrintJson(f);
    PrintFlow(f, true);
  });
  auto* list = flow->add_subcommand("list", "flows, newest first");
  list->add_option("--status", a->status, "running|ready|needs_human|failed|cancelled");
  list->add_option("--limit", a->limit);
  list->callback([&opts, rc, a] {
    Client c(opts);
    v1::FlowListRequest req;
    req.set_status(a->status);
    req.set_limit(a->limit);
    v1::FlowListReply r;
    if (!Call(c, &S::FlowList, req, &r, rc)) return;
    if (c.json()) return PrintJson(r);
    for (const auto& f : r.flows()) PrintFlow(f, false);
  });
  auto* wait = flow->add_subcommand(
      "wait", "block until the flow ends (0 ready, 5 needs_human/failed/cancelled, 4 timeout)");
  wait->add_option("id", a->id)->required();
  wait->add_option("--timeout-ms", a->timeout_ms, "default 600000");
  wait->callback([&opts, rc, a] {
    Client c(opts);
    v1::FlowWaitRequest req;
    req.set_id(a->id);
    req.set_timeout_ms(a->timeout_ms);
    v1::Flow f;
    auto ctx = c.Context(a->timeout_ms + 15000);
    auto s = c.stub().FlowWait(ctx.get(), req, &f);
    if (!s.ok()) return void(*rc = c.Fail(s, ctx.get()));
    if (c.json()) PrintJson(f); else PrintFlow(f, true);
    *rc = ExitFor(f);
  });
  auto* cancel = flow->add_subcommand("cancel", "stop the running step; keep the worktree");
  cancel->add_option("id", a->id)->required();
  cancel->callback([&opts, rc, a] {
    Client c(opts);
    v1::FlowCancelRequest req;
    req.set_id(a->id);
    v1::Flow f;
    if (!Call(c, &S::FlowCancel, req, &f, rc)) return;
    if (c.json()) return PrintJson(f);
    PrintFlow(f, false);
  });
  auto* clean = flow->add_subcommand("clean", "remove ended flows' worktrees (the branch stays unless merged)");
  clean->add_option("id", a->id, "one flow (default: every ended flow)");
  clean->callback([&opts, rc, a] {
    Client c(opts);
    v1::FlowCleanRequest req;
    req.set_id(a->id);
    v1::FlowListReply r;
    if (!Call(c, &S::FlowClean, req, &r, rc, 300000)) return;
    if (c.json()) return PrintJson(r);
    for (const auto& f : r.flows()) std::cout << "flow " << f.id() << ": " << f.note() << "\n";
  });
}

}  // namespace conclave::client
