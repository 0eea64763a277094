// conclave wait / watch: the two ways to follow events. Both resume from a cursor (the last
// seq seen) across reconnects and daemon restarts, so nothing is missed and nothing repeats.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "commands.h"

namespace conclave::client {
namespace {

struct Filters {
  std::string types, to, from;
  std::vector<int64_t> tasks;
};

void AddFilterOptions(CLI::App* cmd, Filters* f) {
  cmd->add_option("--types", f->types, "comma-separated types");
  cmd->add_option("--to", f->to, "recipient");
  cmd->add_option("--from", f->from, "sender (conclaved = the daemon's own reports)");
  cmd->add_option("--task", f->tasks, "task id (repeatable)");
}

// The daemon's current head (the seq of its newest message), so a watch that starts "from now"
// has a cursor to resume from even before its first event.
bool CurrentHead(Client& c, int64_t* head, int* rc) {
  v1::InboxRequest req;
  req.set_limit(1);
  v1::MessageList r;
  auto ctx = c.Context(10000);
  auto s = c.stub().Inbox(ctx.get(), req, &r);
  if (!s.ok()) {
    *rc = c.Fail(s, ctx.get());
    return false;
  }
  *head = r.last_seq();
  return true;
}

bool Transient(const Client& c, const grpc::Status& s, const grpc::ClientContext* ctx) {
  switch (s.error_code()) {
    case grpc::StatusCode::OK:                  // the server ended the stream: resume
    case grpc::StatusCode::UNAVAILABLE:         // unreachable, or the daemon is shutting down
    case grpc::StatusCode::CANCELLED:           // the server shut down under the stream
    case grpc::StatusCode::RESOURCE_EXHAUSTED:  // we fell too far behind: resume from cursor
      return true;
    default:
      return c.Unreachable(s, ctx);
  }
}

}  // namespace

void AddWaitCommands(CLI::App& app, Options& opts, int* rc) {
  // wait
  struct WaitArgs {
    Filters f;
    int64_t after = -1;
    int64_t timeout_ms = 30000;
  };
  auto wa = std::make_shared<WaitArgs>();
  auto* wait = app.add_subcommand(
      "wait", "block until a matching message exists (exit 4 on timeout with nothing)");
  AddFilterOptions(wait, &wa->f);
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
    for (const auto& t : SplitList(wa->f.types)) req.add_types(t);
    req.set_to(wa->f.to);
    req.set_from(wa->f.from);
    for (int64_t t : wa->f.tasks) req.add_task_ids(t);
    if (wa->after >= 0) {
      req.set_after_seq(wa->after);
    } else if (wa->f.tasks.empty()) {
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
      *rc = c.Fail(s, ctx.get());
      return;
    }
    if (c.json()) {
      PrintJson(r);
    } else if (r.messages().empty()) {
      std::cout << "timed out; cursor " << r.cursor() << "\n";
      for (const auto& l : r.liveness()) {
        std::cout << "  task " << l.task_id() << " dispatch " << l.dispatch_id() << " " << l.state()
                  << (l.process_alive() ? " alive" : "")
                  << (l.last_output_age_ms() >= 0
                          ? ", last output " + std::to_string(l.last_output_age_ms() / 1000) +
                                " s ago"
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
    Filters f;
    int64_t after = -1;
  };
  auto wt = std::make_shared<WatchArgs>();
  auto* watch = app.add_subcommand(
      "watch",
      "stream matching events as they commit (JSON lines with --json); reconnects "
      "after a daemon restart and resumes from its cursor");
  AddFilterOptions(watch, &wt->f);
  watch->add_option("--after", wt->after, "replay from this cursor (default: from now)");
  watch->callback([&opts, rc, wt] {
    Client c(opts);
    v1::WatchRequest req;
    for (const auto& t : SplitList(wt->f.types)) req.add_types(t);
    req.set_to(wt->f.to);
    req.set_from(wt->f.from);
    for (int64_t t : wt->f.tasks) req.add_task_ids(t);
    // Resolving "now" to a seq first makes every reconnect exact, even before the first event.
    // The probe also makes a daemon that cannot be reached at the start exit 3 at once; only
    // a watch that was connected keeps retrying.
    int64_t head = 0;
    if (!CurrentHead(c, &head, rc)) return;
    int64_t cursor = wt->after >= 0 ? wt->after : head;
    int backoff_ms = 100;
    bool reported = false;
    for (;;) {
      req.set_after_seq(cursor);
      auto ctx = c.Context(0);
      auto reader = c.stub().Watch(ctx.get(), req);
      v1::Message m;
      while (reader->Read(&m)) {
        if (m.seq() <= cursor) continue;  // never print an event twice
        cursor = m.seq();
        if (c.json()) {
          std::cout << ToJson(m) << "\n";
        } else {
          PrintMessage(m);
        }
        std::cout.flush();
        backoff_ms = 100;
        reported = false;
      }
      grpc::Status s = reader->Finish();
      if (!Transient(c, s, ctx.get())) {
        *rc = c.Fail(s, ctx.get());
        return;
      }
      if (!reported) {
        std::cerr << "conclave: watch: stream ended (" << s.error_message()
                  << "); reconnecting and resuming after seq " << cursor << "\n";
        reported = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
      backoff_ms = std::min(backoff_ms * 2, 2000);
    }
  });
}

}  // namespace conclave::client
