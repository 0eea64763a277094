// conclave status / handle / send / check / reply / inbox / wait / watch.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "commands.h"

namespace conclave::client {

bool ReadInput(const std::string& path, std::string* out) {
  std::stringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << "conclave: cannot read " << path << "\n";
      return false;
    }
    ss << in.rdbuf();
  }
  *out = ss.str();
  return true;
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

namespace {

void PrintMessage(const v1::Message& m) {
  std::cout << "#" << m.seq() << " " << FormatTime(m.created_unix_ms()) << " [" << m.type() << "]";
  if (m.priority() != "normal") std::cout << " (" << m.priority() << ")";
  std::cout << " " << m.from() << " -> " << m.to();
  if (m.task_id()) std::cout << " task=" << m.task_id();
  if (m.dispatch_id()) std::cout << " dispatch=" << m.dispatch_id();
  std::cout << "\n  " << m.subject() << "\n";
  if (!m.body().empty()) {
    std::istringstream body(m.body());
    std::string line;
    int n = 0;
    while (std::getline(body, line) && n++ < 20) std::cout << "  | " << line << "\n";
  }
}

void PrintList(const Client& c, const v1::MessageList& list, const char* empty) {
  if (c.json()) return PrintJson(list);
  if (list.messages().empty()) std::cout << empty << "\n";
  for (const auto& m : list.messages()) PrintMessage(m);
}

}  // namespace

void AddMessagingCommands(CLI::App& app, Options& opts, int* rc) {
  // status
  auto* status = app.add_subcommand("status", "daemon status, counts, cooldowns and spend");
  status->callback([&opts, rc] {
    Client c(opts);
    v1::StatusReply r;
    auto ctx = c.Context(10000);
    auto s = c.stub().GetStatus(ctx.get(), v1::GetStatusRequest(), &r);
    if (!s.ok()) return void(*rc = c.Fail(s));
    if (c.json()) return PrintJson(r);
    std::cout << "conclaved " << r.version() << "  pid " << r.pid() << "  up "
              << r.uptime_ms() / 1000 << " s\n"
              << "listener   " << r.listener() << "\n"
              << "state dir  " << r.state_dir() << "\n"
              << "database   " << r.database_path() << " (schema " << r.schema_version() << ")\n"
              << "profiles   " << r.profiles_dir() << "\n"
              << "last seq   " << r.last_seq() << "\n";
    std::cout << "counts    ";
    for (const auto& [k, v] : std::map<std::string, int64_t>(r.counts().begin(), r.counts().end())) {
      std::cout << " " << k << "=" << v;
    }
    std::cout << "\n";
    for (const auto& cd : r.cooldowns()) {
      std::cout << "cooldown   " << cd.profile() << " until " << FormatTime(cd.until_unix_ms())
                << " (" << cd.reason() << ")\n";
    }
    for (const auto& sp : r.spend()) {
      std::cout << "spend      " << sp.cap() << " $" << sp.spent_usd();
      if (sp.cap_usd() > 0) std::cout << " of $" << sp.cap_usd();
      std::cout << "\n";
    }
  });

  // handle register / list
  auto* handle = app.add_subcommand("handle", "addressable names");
  handle->require_subcommand(1);
  auto* reg = handle->add_subcommand("register", "register a handle");
  auto name = std::make_shared<std::string>();
  reg->add_option("name", *name, "handle name")->required();
  reg->callback([&opts, rc, name] {
    Client c(opts);
    v1::RegisterHandleRequest req;
    req.set_name(*name);
    v1::Handle h;
    auto ctx = c.Context();
    auto s = c.stub().RegisterHandle(ctx.get(), req, &h);
    if (!s.ok()) return void(*rc = c.Fail(s));
    if (c.json()) return PrintJson(h);
    std::cout << "registered " << h.name() << "\n";
  });
  auto* hlist = handle->add_subcommand("list", "list handles");
  hlist->callback([&opts, rc] {
    Client c(opts);
    v1::ListHandlesReply r;
    auto ctx = c.Context();
    auto s = c.stub().ListHandles(ctx.get(), v1::ListHandlesRequest(), &r);
    if (!s.ok()) return void(*rc = c.Fail(s));
    if (c.json()) return PrintJson(r);
    for (const auto& h : r.handles()) std::cout << h.name() << "\t" << h.kind() << "\n";
  });

  // send
  struct SendArgs {
    std::string to, type = "status", subject, body, body_file, payload, priority = "normal", from,
                token;
    int64_t task = 0, dispatch = 0;
  };
  auto sa = std::make_shared<SendArgs>();
  auto* send = app.add_subcommand("send", "send a message to a handle or @group");
  send->add_option("--to", sa->to, "handle or @all|@idle|@family:F|@profile:P|@worktree:DIR");
  send->add_option("--type", sa->type, "status|dispatch|worker_done|heartbeat|escalation|"
                                       "decision_gate|question|reply");
  send->add_option("--subject", sa->subject, "subject line")->required();
  auto* body = send->add_option("--body", sa->body, "body text");
  send->add_option("--body-file", sa->body_file, "read the body from a file (- for stdin)")
      ->excludes(body);
  send->add_option("--task", sa->task, "task id");
  send->add_option("--dispatch", sa->dispatch, "dispatch id");
  send->add_option("--payload", sa->payload, "JSON payload");
  send->add_option("--priority", sa->priority, "normal|high|urgent");
  send->add_option("--from", sa->from, "sender (default: $CONCLAVE_TERMINAL_HANDLE or coordinator)");
  send->add_option("--token", sa->token, "dispatch token (default: $CONCLAVE_DISPATCH_TOKEN)");
  send->callback([&opts, rc, sa] {
    Client c(opts);
    v1::SendRequest req;
    std::string body_text = sa->body;
    if (!sa->body_file.empty() && !ReadInput(sa->body_file, &body_text)) {
      *rc = kExitUsage;
      return;
    }
    // Inside a dispatched worker the daemon's environment binds the report to its attempt.
    std::string token = sa->token;
    int64_t dispatch = sa->dispatch;
    int64_t task = sa->task;
    std::string from = sa->from;
    if (const char* t = std::getenv("CONCLAVE_DISPATCH_TOKEN"); token.empty() && t) token = t;
    if (const char* d = std::getenv("CONCLAVE_DISPATCH_ID"); dispatch == 0 && d && !token.empty()) {
      dispatch = std::atoll(d);
    }
    if (const char* t = std::getenv("CONCLAVE_TASK_ID"); task == 0 && t && !token.empty()) {
      task = std::atoll(t);
    }
    if (const char* h = std::getenv("CONCLAVE_TERMINAL_HANDLE"); from.empty() && h) from = h;
    if (sa->to.empty() && token.empty()) {
      std::cerr << "conclave: send: --to is required (outside a dispatched worker)\n";
      *rc = kExitUsage;
      return;
    }
    req.set_to(sa->to);
    req.set_type(sa->type);
    req.set_subject(sa->subject);
    req.set_body(body_text);
    req.set_payload_json(sa->payload);
    req.set_priority(sa->priority);
    req.set_from(from);
    req.set_task_id(task);
    req.set_dispatch_id(dispatch);
    req.set_dispatch_token(token);
    v1::SendReply r;
    auto ctx = c.Context();
    auto s = c.stub().Send(ctx.get(), req, &r);
    if (!s.ok()) return void(*rc = c.Fail(s));
    if (c.json()) return PrintJson(r);
    for (const auto& m : r.messages()) {
      std::cout << "sent #" << m.seq() << " to " << m.to() << " (thread " << r.thread_id() << ")\n";
    }
  });

  // check
  struct CheckArgs {
    std::string terminal, types;
    bool peek = false;
  };
  auto ca = std::make_shared<CheckArgs>();
  auto* check = app.add_subcommand("check", "unread messages for a handle (marks them read)");
  check->add_option("--terminal", ca->terminal, "handle to check")->required();
  check->add_option("--types", ca->types, "comma-separated types");
  check->add_flag("--peek", ca->peek, "do not mark read");
  check->callback([&opts, rc, ca] {
    Client c(opts);
    v1::CheckRequest req;
    req.set_handle(ca->terminal);
    for (const auto& t : SplitList(ca->types)) req.add_types(t);
    req.set_peek(ca->peek);
    v1::MessageList r;
    auto ctx = c.Context();
    auto s = c.stub().Check(ctx.get(), req, &r);
    if (!s.ok()) return void(*rc = c.Fail(s));
    PrintList(c, r, "no unread messages");
  });

  // reply
  struct ReplyArgs {
    int64_t id = 0;
    std::string body, from, subject;
  };
  auto ra = std::make_shared<ReplyArgs>();
  auto* reply = app.add_subcommand("reply", "answer a message in its thread");
  reply->add_option("--id", ra->id, "seq of the message answered")->required();
  reply->add_option("--body", ra->body, "reply text")->required();
  reply->add_option("--from", ra->from, "sender (default: the original recipient)");
  reply->add_option("--subject", ra->subject, "subject (default: Re: ...)");
  reply->callback([&opts, rc, ra] {
    Client c(opts);
    v1::ReplyRequest req;
    req.set_seq(ra->id);
    req.set_body(ra->body);
    req.set_from(ra->from);
    req.set_subject(ra->subject);
    v1::SendReply r;
    auto ctx = c.Context();
    auto s = c.stub().Reply(ctx.get(), req, &r);
    if (!s.ok()) return void(*rc = c.Fail(s));
    if (c.json()) return PrintJson(r);
    for (const auto& m : r.messages()) std::cout << "replied #" << m.seq() << " to " << m.to() << "\n";
  });

  // inbox
  struct InboxArgs {
    int limit = 20;
    std::string types, to, from;
    int64_t task = 0;
    bool unread = false;
  };
  auto ia = std::make_shared<InboxArgs>();
  auto* inbox = app.add_subcommand("inbox", "the global message view, newest first");
  inbox->add_option("--limit", ia->limit, "how many");
  inbox->add_option("--types", ia->types, "comma-separated types");
  inbox->add_option("--to", ia->to, "recipient");
  inbox->add_option("--from", ia->from, "sender");
  inbox->add_option("--task", ia->task, "task id");
  inbox->add_flag("--unread", ia->unread, "unread only");
  inbox->callback([&opts, rc, ia] {
    Client c(opts);
    v1::InboxRequest req;
    req.set_limit(ia->limit);
    for (const auto& t : SplitList(ia->types)) req.add_types(t);
    req.set_to(ia->to);
    req.set_from(ia->from);
    req.set_task_id(ia->task);
    req.set_unread_only(ia->unread);
    v1::MessageList r;
    auto ctx = c.Context();
    auto s = c.stub().Inbox(ctx.get(), req, &r);
    if (!s.ok()) return void(*rc = c.Fail(s));
    PrintList(c, r, "no messages");
  });

  // wait
  struct WaitArgs {
    std::string types, to, from;
    std::vector<int64_t> tasks;
    int64_t after = -1;
    int64_t timeout_ms = 30000;
  };
  auto wa = std::make_shared<WaitArgs>();
  auto* wait = app.add_subcommand(
      "wait", "block until a matching message exists (exit 4 on timeout with nothing)");
  wait->add_option("--types", wa->types, "comma-separated types");
  wait->add_option("--to", wa->to, "recipient");
  wait->add_option("--from", wa->from, "sender (conclaved = the daemon's own reports)");
  wait->add_option("--task", wa->tasks, "task id (repeatable)");
  wait->add_option("--after", wa->after,
                   "cursor: only messages with seq > N (default: from now, or from the start "
                   "when --task is given)");
  wait->add_option("--timeout-ms", wa->timeout_ms, "give up after N ms (default 30000)");
  wait->callback([&opts, rc, wa] {
    Client c(opts);
    if (wa->timeout_ms < 0) {
      std::cerr << "conclave: wait: --timeout-ms must not be negative\n";
      *rc = kExitUsage;
      return;
    }
    v1::WaitRequest req;
    for (const auto& t : SplitList(wa->types)) req.add_types(t);
    req.set_to(wa->to);
    req.set_from(wa->from);
    for (int64_t t : wa->tasks) req.add_task_ids(t);
    if (wa->after >= 0) {
      req.set_after_seq(wa->after);
    } else if (wa->tasks.empty()) {
      req.set_from_now(true);
    }
    auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(wa->timeout_ms);
    int backoff_ms = 100;
    v1::WaitReply r;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      give_up - std::chrono::steady_clock::now())
                      .count();
      req.set_timeout_ms(std::max<int64_t>(1, std::min<int64_t>(left, 3600 * 1000)));
      auto ctx = c.Context(req.timeout_ms() + 15000);
      r.Clear();
      auto s = c.stub().Wait(ctx.get(), req, &r);
      if (s.ok()) {
        if (!r.timed_out() || std::chrono::steady_clock::now() >= give_up) break;
        // A shorter server-side wait ended (daemon restart, long timeout): resume.
        if (r.cursor() > req.after_seq()) {
          req.set_after_seq(r.cursor());
          req.set_from_now(false);
        }
        continue;
      }
      // The daemon went away mid-wait: keep the cursor and retry until our own deadline.
      bool transient = s.error_code() == grpc::StatusCode::UNAVAILABLE ||
                       s.error_code() == grpc::StatusCode::CANCELLED;  // server shutting down
      if (transient && left > backoff_ms) {
        std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
        backoff_ms = std::min(backoff_ms * 2, 2000);
        continue;
      }
      *rc = c.Fail(s);
      return;
    }
    if (c.json()) {
      PrintJson(r);
    } else if (r.messages().empty()) {
      std::cout << "timed out; cursor " << r.cursor() << "\n";
      for (const auto& l : r.liveness()) {
        std::cout << "  task " << l.task_id() << " dispatch " << l.dispatch_id() << " "
                  << l.state() << (l.process_alive() ? " alive" : "")
                  << (l.last_output_age_ms() >= 0
                          ? ", last output " + std::to_string(l.last_output_age_ms() / 1000) + " s ago"
                          : "")
                  << "\n";
      }
    } else {
      for (const auto& m : r.messages()) PrintMessage(m);
      std::cout << "cursor " << r.cursor() << "\n";
    }
    if (r.messages().empty()) *rc = kExitTimeout;
  });

  // watch
  struct WatchArgs {
    int64_t after = -1;
    std::string types;
  };
  auto wt = std::make_shared<WatchArgs>();
  auto* watch = app.add_subcommand("watch", "stream every new event (JSON lines with --json)");
  watch->add_option("--after", wt->after, "replay from this cursor (default: from now)");
  watch->add_option("--types", wt->types, "comma-separated types");
  watch->callback([&opts, rc, wt] {
    Client c(opts);
    v1::WatchRequest req;
    if (wt->after >= 0) {
      req.set_after_seq(wt->after);
    } else {
      req.set_from_now(true);
    }
    for (const auto& t : SplitList(wt->types)) req.add_types(t);
    grpc::ClientContext ctx;
    if (const char* tok = std::getenv("CONCLAVE_TOKEN"); tok && *tok) {
      ctx.AddMetadata("authorization", std::string("Bearer ") + tok);
    }
    auto reader = c.stub().Watch(&ctx, req);
    v1::Message m;
    while (reader->Read(&m)) {
      if (c.json()) {
        std::cout << ToJson(m) << "\n";
      } else {
        PrintMessage(m);
      }
      std::cout.flush();
    }
    auto s = reader->Finish();
    if (!s.ok()) *rc = c.Fail(s);
  });
}

}  // namespace conclave::client
