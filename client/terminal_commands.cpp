// conclave profile / terminal: model backends and the worker terminals that run them.
#include <unistd.h>

#include <iomanip>
#include <iostream>

#include "commands.h"

namespace conclave::client {
namespace {

void PrintTerminal(const v1::Terminal& t) {
  std::cout << std::left << std::setw(20) << t.handle() << std::setw(10) << t.state()
            << std::setw(18) << t.profile() << std::setw(12) << t.family() << t.cwd();
  if (t.active_dispatch_id()) std::cout << "  dispatch " << t.active_dispatch_id();
  std::cout << "\n";
}

}  // namespace

void AddTerminalCommands(CLI::App& app, Options& opts, int* rc) {
  using S = v1::Conclave::Stub;
  // profile list
  auto* profile = app.add_subcommand("profile", "model backends");
  profile->require_subcommand(1);
  profile->add_subcommand("list", "loaded profiles and load errors")->callback([&opts, rc] {
    Client c(opts);
    v1::ListProfilesReply r;
    if (!Call(c, &S::ListProfiles, v1::ListProfilesRequest(), &r, rc)) return;
    if (c.json()) return PrintJson(r);
    for (const auto& p : r.profiles()) {
      std::cout << std::left << std::setw(18) << p.name() << std::setw(12) << p.family()
                << std::setw(15) << p.parser() << "running " << p.running() << "/"
                << p.max_concurrent();
      if (p.cooldown_until_unix_ms()) {
        std::cout << "  cooling down until " << FormatTime(p.cooldown_until_unix_ms());
      }
      std::cout << "\n";
    }
    for (const auto& e : r.errors()) {
      std::cerr << "invalid profile " << e.file()
                << (e.field().empty() ? "" : " (" + e.field() + ")") << ": " << e.error() << "\n";
    }
  });

  // terminal
  auto* term = app.add_subcommand("terminal", "worker terminals");
  term->require_subcommand(1);
  struct TermArgs {
    std::string profile, handle, cwd;
    bool force = false, all = false;
    int64_t dispatch = 0, cursor = 0;
    bool follow = false, exclusive = false;
  };
  auto ta = std::make_shared<TermArgs>();
  auto* tcreate = term->add_subcommand("create", "create a worker terminal");
  tcreate->add_option("--profile", ta->profile, "profile name")->required();
  tcreate->add_option("--handle", ta->handle, "handle (default: PROFILE-N)");
  tcreate->add_option("--cwd", ta->cwd, "working directory / worktree (default: here)")
      ->type_name("DIR");
  tcreate->add_flag("--exclusive", ta->exclusive,
                    "one writer at a time in its directory, through any terminal");
  tcreate->callback([&opts, rc, ta] {
    Client c(opts);
    v1::CreateTerminalRequest req;
    req.set_profile(ta->profile);
    req.set_handle(ta->handle);
    req.set_exclusive(ta->exclusive);
    char buf[4096];
    req.set_cwd(ta->cwd.empty() && getcwd(buf, sizeof buf) ? std::string(buf) : ta->cwd);
    v1::Terminal t;
    if (!Call(c, &S::CreateTerminal, req, &t, rc)) return;
    if (c.json()) return PrintJson(t);
    std::cout << "created terminal " << t.handle() << " (" << t.profile() << ", " << t.family()
              << ") in " << t.cwd() << "\n";
  });
  auto* tlist = term->add_subcommand("list", "list terminals");
  tlist->add_flag("--all", ta->all, "include closed terminals");
  tlist->callback([&opts, rc, ta] {
    Client c(opts);
    v1::ListTerminalsRequest req;
    req.set_include_closed(ta->all);
    v1::ListTerminalsReply r;
    if (!Call(c, &S::ListTerminals, req, &r, rc)) return;
    if (c.json()) return PrintJson(r);
    for (const auto& t : r.terminals()) PrintTerminal(t);
  });
  auto* tshow = term->add_subcommand("show", "show one terminal");
  tshow->add_option("handle", ta->handle)->required();
  tshow->callback([&opts, rc, ta] {
    Client c(opts);
    v1::GetTerminalRequest req;
    req.set_handle(ta->handle);
    v1::Terminal t;
    if (!Call(c, &S::GetTerminal, req, &t, rc)) return;
    if (c.json()) return PrintJson(t);
    PrintTerminal(t);
  });
  auto* tclose = term->add_subcommand("close", "drain and close a terminal");
  tclose->add_option("handle", ta->handle)->required();
  tclose->add_flag("--force", ta->force, "stop the running dispatch");
  tclose->callback([&opts, rc, ta] {
    Client c(opts);
    v1::CloseTerminalRequest req;
    req.set_handle(ta->handle);
    req.set_force(ta->force);
    v1::Terminal t;
    if (!Call(c, &S::CloseTerminal, req, &t, rc)) return;
    if (c.json()) return PrintJson(t);
    std::cout << t.handle() << " is " << t.state() << "\n";
  });
  auto* tread = term->add_subcommand(
      "read", "read a dispatch transcript from a byte cursor (--follow: stream it live)");
  tread->add_option("handle", ta->handle)->required();
  tread->add_option("--dispatch", ta->dispatch, "dispatch id (default: the latest)");
  tread->add_option("--cursor", ta->cursor, "byte offset");
  tread->add_flag("--follow", ta->follow,
                  "stream the transcript as it is written until the dispatch ends (JSON lines "
                  "of chunks with --json)");
  tread->callback([&opts, rc, ta] {
    Client c(opts);
    if (!ta->follow) {
      v1::ReadTranscriptRequest req;
      req.set_handle(ta->handle);
      req.set_dispatch_id(ta->dispatch);
      req.set_cursor(ta->cursor);
      v1::TranscriptChunk r;
      if (!Call(c, &S::ReadTranscript, req, &r, rc)) return;
      if (c.json()) return PrintJson(r);
      std::cout << r.data();
      std::cout.flush();
      std::cerr << "next cursor " << r.next_cursor() << "\n";
      return;
    }
    // Server-streamed: bytes arrive as the worker writes them; the stream ends with the run.
    v1::FollowTranscriptRequest req;
    req.set_handle(ta->handle);
    req.set_dispatch_id(ta->dispatch);
    req.set_cursor(ta->cursor);
    auto ctx = c.Context(0);
    auto reader = c.stub().FollowTranscript(ctx.get(), req);
    v1::TranscriptChunk chunk;
    while (reader->Read(&chunk)) {
      if (c.json()) {
        std::cout << ToJson(chunk) << "\n";
      } else {
        std::cout << chunk.data();
      }
      std::cout.flush();
    }
    grpc::Status s = reader->Finish();
    if (!s.ok()) *rc = c.Fail(s, ctx.get());
  });
}

}  // namespace conclave::client
