// conclave task / dispatch / gate.
#include <iomanip>
#include <iostream>

#include "commands.h"

namespace conclave::client {
namespace {

void PrintTask(const v1::Task& t) {
  std::cout << std::left << std::setw(6) << t.id() << std::setw(11) << t.status()
            << std::setw(9) << t.role() << t.title();
  if (!t.blocked_reason().empty()) std::cout << "  [" << t.blocked_reason() << "]";
  std::cout << "\n";
}

void PrintDispatch(const v1::DispatchInfo& d) {
  std::cout << "  dispatch " << d.id() << " attempt " << d.attempt() << " " << d.state()
            << " on " << (d.terminal().empty() ? "(queued for " + d.target() + ")" : d.terminal());
  if (!d.profile().empty()) std::cout << " [" << d.profile() << "/" << d.family() << "]";
  if (d.exit_code() >= 0 && d.finished_unix_ms()) std::cout << " exit " << d.exit_code();
  if (!d.failure_kind().empty()) {
    std::cout << "\n    class " << (d.failure_class().empty() ? "-" : d.failure_class()) << ", kind "
              << d.failure_kind();
    if (!d.fingerprint().empty()) std::cout << ", fingerprint " << d.fingerprint();
    std::cout << "\n    evidence: " << d.evidence();
  }
  if (d.cost_usd() > 0) {
    std::cout << "\n    cost $" << d.cost_usd() << (d.cost_estimated() ? " (estimated)" : "");
  }
  std::cout << "\n";
}

}  // namespace

void AddTaskCommands(CLI::App& app, Options& opts, int* rc) {
  using S = v1::Conclave::Stub;
  // task
  auto* task = app.add_subcommand("task", "tasks");
  task->require_subcommand(1);
  struct TaskArgs {
    std::string brief, title, deps, key, hypothesis, role = "writer", status, coordinator, session,
        scope, validation, reason;
    int auto_retry = 0;
    double budget = 0;
    int64_t id = 0;
    int limit = 200;
  };
  auto tk = std::make_shared<TaskArgs>();
  auto* tc = task->add_subcommand("create", "create a task (idempotent with --key)");
  tc->add_option("--brief", tk->brief, "brief file, or - for stdin")->required()->type_name("FILE");
  tc->add_option("--title", tk->title, "title");
  tc->add_option("--deps", tk->deps, "comma-separated task ids this depends on");
  tc->add_option("--key", tk->key, "idempotency key");
  tc->add_option("--hypothesis", tk->hypothesis, "the hypothesis under test");
  tc->add_option("--role", tk->role, "writer|reviewer|planner|tester|researcher|stage");
  tc->add_option("--auto-retry", tk->auto_retry, "re-dispatch counted failures up to N times");
  tc->add_option("--coordinator", tk->coordinator, "handle that receives the task's events");
  tc->add_option("--session", tk->session, "coordinator session (budgets, Strong guard)");
  tc->add_option("--budget-usd", tk->budget, "per-task spend cap");
  tc->add_option("--scope", tk->scope, "scope");
  tc->add_option("--validation", tk->validation, "how success is validated");
  tc->callback([&opts, rc, tk] {
    Client c(opts);
    v1::CreateTaskRequest req;
    std::string brief;
    if (!ReadInput(tk->brief, &brief)) {
      *rc = kExitUsage;
      return;
    }
    req.set_brief(brief);
    req.set_title(tk->title);
    for (const auto& d : SplitList(tk->deps)) {
      try {
        req.add_deps(std::stoll(d));
      } catch (...) {
        std::cerr << "conclave: --deps: '" << d << "' is not a task id\n";
        *rc = kExitUsage;
        return;
      }
    }
    req.set_idempotency_key(tk->key);
    req.set_hypothesis(tk->hypothesis);
    req.set_role(tk->role);
    req.set_auto_retry(tk->auto_retry);
    req.set_coordinator(tk->coordinator);
    req.set_session(tk->session);
    req.set_budget_usd(tk->budget);
    req.set_scope(tk->scope);
    req.set_validation(tk->validation);
    v1::CreateTaskReply r;
    if (!Call(c, &S::CreateTask, req, &r, rc)) return;
    if (c.json()) return PrintJson(r);
    std::cout << (r.existing() ? "existing task " : "created task ") << r.task().id() << " ("
              << r.task().status() << ")\n";
    if (r.existing() && !r.task().result_json().empty()) {
      std::cout << "  result: " << r.task().result_json().substr(0, 2000) << "\n";
    }
  });
  auto* tl = task->add_subcommand("list", "list tasks");
  tl->add_option("--status", tk->status, "filter by status");
  tl->add_option("--limit", tk->limit, "how many");
  tl->callback([&opts, rc, tk] {
    Client c(opts);
    v1::ListTasksRequest req;
    req.set_status(tk->status);
    req.set_limit(tk->limit);
    v1::ListTasksReply r;
    if (!Call(c, &S::ListTasks, req, &r, rc)) return;
    if (c.json()) return PrintJson(r);
    for (const auto& t : r.tasks()) PrintTask(t);
  });
  auto* tsh = task->add_subcommand("show", "a task with its dispatches, result and events");
  tsh->add_option("id", tk->id)->required();
  tsh->callback([&opts, rc, tk] {
    Client c(opts);
    v1::GetTaskRequest req;
    req.set_id(tk->id);
    v1::TaskDetail r;
    if (!Call(c, &S::GetTask, req, &r, rc)) return;
    if (c.json()) return PrintJson(r);
    const auto& t = r.task();
    PrintTask(t);
    if (!t.hypothesis().empty()) std::cout << "  hypothesis: " << t.hypothesis() << "\n";
    if (t.deps_size()) {
      std::cout << "  deps:";
      for (auto d : t.deps()) std::cout << " " << d;
      std::cout << "\n";
    }
    if (t.breaker_count()) {
      std::cout << "  breaker: " << t.breaker_count() << " consecutive, fingerprint "
                << t.breaker_fingerprint() << "\n";
    }
    std::cout << "  spent $" << t.spent_usd() << "\n";
    for (const auto& d : r.dispatches()) PrintDispatch(d);
    for (const auto& g : r.gates()) {
      std::cout << "  gate " << g.id() << " " << g.status() << ": " << g.question();
      if (!g.decision().empty()) std::cout << " → " << g.decision();
      std::cout << "\n";
    }
    if (!t.result_json().empty()) std::cout << "  result: " << t.result_json().substr(0, 2000) << "\n";
    if (r.events_size()) std::cout << "  last events (newest first):\n";
    for (const auto& m : r.events()) {
      std::cout << "    #" << m.seq() << " " << FormatTime(m.created_unix_ms()) << " [" << m.type()
                << "] " << m.from() << " -> " << m.to() << ": " << m.subject() << "\n";
    }
  });
  struct UpdArgs {
    std::string title, brief, hypothesis, scope, validation;
    int auto_retry = -1;
    double budget = -1;
  };
  auto ua = std::make_shared<UpdArgs>();
  auto* tu = task->add_subcommand("update", "change a task (hypothesis/scope/validation = re-plan)");
  tu->add_option("id", tk->id)->required();
  auto* o_title = tu->add_option("--title", ua->title);
  auto* o_brief = tu->add_option("--brief", ua->brief, "new brief file, or -")->type_name("FILE");
  auto* o_hyp = tu->add_option("--hypothesis", ua->hypothesis);
  auto* o_scope = tu->add_option("--scope", ua->scope);
  auto* o_val = tu->add_option("--validation", ua->validation);
  tu->add_option("--auto-retry", ua->auto_retry);
  tu->add_option("--budget-usd", ua->budget);
  tu->callback([&opts, rc, tk, ua, o_title, o_brief, o_hyp, o_scope, o_val] {
    Client c(opts);
    v1::UpdateTaskRequest req;
    req.set_id(tk->id);
    if (o_title->count()) req.set_title(ua->title);
    if (o_brief->count()) {
      std::string b;
      if (!ReadInput(ua->brief, &b)) {
        *rc = kExitUsage;
        return;
      }
      req.set_brief(b);
    }
    if (o_hyp->count()) req.set_hypothesis(ua->hypothesis);
    if (o_scope->count()) req.set_scope(ua->scope);
    if (o_val->count()) req.set_validation(ua->validation);
    if (ua->auto_retry >= 0) req.set_auto_retry(ua->auto_retry);
    if (ua->budget >= 0) req.set_budget_usd(ua->budget);
    v1::Task t;
    if (!Call(c, &S::UpdateTask, req, &t, rc)) return;
    if (c.json()) return PrintJson(t);
    PrintTask(t);
  });
  auto* tcan = task->add_subcommand("cancel", "cancel a task (kills a running dispatch)");
  tcan->add_option("id", tk->id)->required();
  tcan->add_option("--reason", tk->reason);
  tcan->callback([&opts, rc, tk] {
    Client c(opts);
    v1::CancelTaskRequest req;
    req.set_id(tk->id);
    req.set_reason(tk->reason);
    v1::Task t;
    if (!Call(c, &S::CancelTask, req, &t, rc)) return;
    if (c.json()) return PrintJson(t);
    PrintTask(t);
  });

  // dispatch
  struct DispArgs {
    int64_t task = 0;
    std::string to, from;
    int timeout = 0;
    double budget = 0;
  };
  auto da = std::make_shared<DispArgs>();
  auto* disp = app.add_subcommand("dispatch", "run a task on a terminal or @group");
  disp->add_option("--task", da->task, "task id")->required();
  disp->add_option("--to", da->to, "terminal handle or @idle|@family:F|@profile:P|@worktree:D")
      ->required();
  disp->add_option("--timeout-s", da->timeout, "hard timeout (default: the profile's)");
  disp->add_option("--from", da->from, "coordinator handle (default: the task's)");
  disp->add_option("--budget-usd", da->budget, "per-dispatch spend cap");
  disp->callback([&opts, rc, da] {
    Client c(opts);
    v1::DispatchRequest req;
    req.set_task_id(da->task);
    req.set_to(da->to);
    req.set_timeout_s(da->timeout);
    req.set_from(da->from);
    req.set_budget_usd(da->budget);
    v1::DispatchInfo d;
    if (!Call(c, &S::Dispatch, req, &d, rc)) return;
    if (c.json()) return PrintJson(d);
    std::cout << "dispatch " << d.id() << " " << d.state()
              << (d.terminal().empty() ? " (waiting for a free terminal)" : " on " + d.terminal())
              << "\n";
  });

  // gate
  auto* gate = app.add_subcommand("gate", "decision gates");
  gate->require_subcommand(1);
  struct GateArgs {
    int64_t task = 0, id = 0;
    std::string question, options, decision, reason;
    bool open = false;
  };
  auto ga = std::make_shared<GateArgs>();
  auto* gc = gate->add_subcommand("create", "block a task on a coordinator decision");
  gc->add_option("--task", ga->task)->required();
  gc->add_option("--question", ga->question)->required();
  gc->add_option("--options", ga->options, "comma-separated allowed decisions");
  gc->callback([&opts, rc, ga] {
    Client c(opts);
    v1::CreateGateRequest req;
    req.set_task_id(ga->task);
    req.set_question(ga->question);
    for (const auto& o : SplitList(ga->options)) req.add_options(o);
    v1::Gate g;
    if (!Call(c, &S::CreateGate, req, &g, rc)) return;
    if (c.json()) return PrintJson(g);
    std::cout << "gate " << g.id() << " open on task " << g.task_id() << "\n";
  });
  auto* gr = gate->add_subcommand(
      "resolve", "answer a gate and unblock its task (a review's gate records a sign-off: a "
                 "human's only when run from a terminal)");
  gr->add_option("id", ga->id)->required();
  gr->add_option("--decision", ga->decision)->required();
  gr->add_option("--reason", ga->reason, "why (recorded with a review's sign-off)");
  gr->callback([&opts, rc, ga] {
    Client c(opts);
    v1::ResolveGateRequest req;
    req.set_id(ga->id);
    req.set_decision(ga->decision);
    req.set_reason(ga->reason);
    // Who is deciding, as this process knows itself (the daemon records it with a sign-off).
    req.set_caller_uid(static_cast<int64_t>(getuid()));
    req.set_caller_pid(static_cast<int64_t>(getpid()));
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) req.set_caller_exe(std::string(exe, static_cast<size_t>(n)));
    if (isatty(0)) {
      const char* tty = ttyname(0);
      req.set_caller_tty(tty ? tty : "?");
    }
    v1::Gate g;
    if (!Call(c, &S::ResolveGate, req, &g, rc)) return;
    if (c.json()) return PrintJson(g);
    std::cout << "gate " << g.id() << " resolved: " << g.decision() << "\n";
  });
  auto* gl = gate->add_subcommand("list", "list gates");
  gl->add_flag("--open", ga->open, "open gates only");
  gl->add_option("--task", ga->task);
  gl->callback([&opts, rc, ga] {
    Client c(opts);
    v1::ListGatesRequest req;
    req.set_open_only(ga->open);
    req.set_task_id(ga->task);
    v1::ListGatesReply r;
    if (!Call(c, &S::ListGates, req, &r, rc)) return;
    if (c.json()) return PrintJson(r);
    for (const auto& g : r.gates()) {
      std::cout << g.id() << "\t" << g.status() << "\t"
                << (g.review_id()  ? "review " + std::to_string(g.review_id())
                    : g.flow_id() ? "flow " + std::to_string(g.flow_id())
                                  : "task " + std::to_string(g.task_id()))
                << "\t" << g.question()
                << (g.decision().empty() ? "" : "\t→ " + g.decision()) << "\n";
    }
  });
}

}  // namespace conclave::client
