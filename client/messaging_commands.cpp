// conclave status / handle / send / check / reply / inbox.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

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

namespace {

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
    if (!s.ok()) return void(*rc = c.Fail(s, ctx.get()));
    if (c.json()) return PrintJson(r);
    std::cout << "conclaved " << r.version() << "  pid " << r.pid() << "  up "
              << r.uptime_ms() / 1000 << " s\n"
              << "listener   " << r.listener() << "\n"
              << "state dir  " << r.state_dir() << "\n"
              << "database   " << r.database_path() << " (schema " << r.schema_version() << ")\n"
              << "profiles   " << r.profiles_dir() << "\n"
              << "heap       " << r.allocator() << "\n"
              << "sqlite     " << r.sqlite() << "\n"
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
    const auto& disk = r.disk();
    auto mib = [](int64_t b) { return std::to_string((b + (1 << 19)) >> 20) + " MiB"; };
    if (disk.measured_unix_ms() > 0) {
      std::cout << "disk       " << mib(disk.state_bytes()) << " used (dispatches "
                << mib(disk.dispatch_bytes()) << ", database " << mib(disk.database_bytes())
                << "), " << mib(disk.free_bytes()) << " free; measured "
                << FormatTime(disk.measured_unix_ms()) << "\n";
    } else {
      std::cout << "disk       not measured yet\n";
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
    if (!s.ok()) return void(*rc = c.Fail(s, ctx.get()));
    if (c.json()) return PrintJson(h);
    std::cout << "registered " << h.name() << "\n";
  });
  auto* hlist = handle->add_subcommand("list", "list handles");
  hlist->callback([&opts, rc] {
    Client c(opts);
    v1::ListHandlesReply r;
    auto ctx = c.Context();
    auto s = c.stub().ListHandles(ctx.get(), v1::ListHandlesRequest(), &r);
    if (!s.ok()) return void(*rc = c.Fail(s, ctx.get()));
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
      ->type_name("FILE")
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
    if (!s.ok()) return void(*rc = c.Fail(s, ctx.get()));
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
    if (!s.ok()) return void(*rc = c.Fail(s, ctx.get()));
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
    if (!s.ok()) return void(*rc = c.Fail(s, ctx.get()));
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
    if (!s.ok()) return void(*rc = c.Fail(s, ctx.get()));
    PrintList(c, r, "no messages");
  });
}

}  // namespace conclave::client
