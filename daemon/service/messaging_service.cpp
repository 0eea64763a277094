#include "service/messaging_service.h"

#include <algorithm>
#include <filesystem>

#include "common/clock.h"
#include "common/random.h"

namespace conclave::service {
namespace {
constexpr int kMaxLimit = 10000;
constexpr int64_t kDefaultWaitMs = 30000;
constexpr int64_t kMaxWaitMs = 3600 * 1000;
}  // namespace

void MessagingService::EnsureBuiltinHandles() {
  Status s = core_.batcher.Write([&]() -> Status {
    if (!core_.handles.Get("coordinator")) {
      core_.handles.Insert({"coordinator", "coordinator", core_.clock.NowMs(), false});
    }
    return Status::Ok();
  });
  (void)s;
}

void MessagingService::RegisterHandle(const std::string& name, Done<store::HandleRecord> done) {
  WriteThen<store::HandleRecord>(
      core_,
      [&]() -> StatusOr<store::HandleRecord> {
        Status v = domain::ValidateHandleName(name, "name");
        if (!v.ok()) return v;
        if (auto existing = core_.handles.Get(name)) {
          if (existing->closed) {
            return FailedPrecondition("name: handle '" + name +
                                      "' was closed; handles are never reissued");
          }
          return *existing;  // registering twice is idempotent
        }
        store::HandleRecord h{name, "handle", core_.clock.NowMs(), false};
        core_.handles.Insert(h);
        return h;
      },
      std::move(done));
}

std::vector<store::HandleRecord> MessagingService::ListHandles() {
  return core_.handles.List(false);
}

StatusOr<std::vector<std::string>> MessagingService::ResolveAddress(const std::string& address,
                                                                    const std::string& sender) {
  if (address.empty()) return InvalidArgument("to: a recipient (handle or @group) is required");
  std::vector<std::string> out;
  if (address[0] != '@') {
    auto h = core_.handles.Get(address);
    if (!h) return NotFound("to: no handle named '" + address + "' (see `conclave handle list`)");
    if (h->closed) return NotFound("to: handle '" + address + "' is closed");
    out.push_back(address);
    return out;
  }
  auto group_arg = [&](const std::string& prefix) -> std::optional<std::string> {
    if (address.rfind(prefix, 0) != 0) return std::nullopt;
    return address.substr(prefix.size());
  };
  auto terminals = core_.terminals.List(false);
  if (address == "@all") {
    for (const auto& h : core_.handles.List(false)) {
      if (h.name != sender) out.push_back(h.name);
    }
  } else if (address == "@idle") {
    for (const auto& t : terminals) {
      if (t.state == domain::TerminalState::kIdle) out.push_back(t.handle);
    }
  } else if (auto f = group_arg("@family:")) {
    for (const auto& t : terminals) {
      if (core_.FamilyOf(t) == *f) out.push_back(t.handle);
    }
  } else if (auto p = group_arg("@profile:")) {
    for (const auto& t : terminals) {
      if (t.profile == *p) out.push_back(t.handle);
    }
  } else if (auto w = group_arg("@worktree:")) {
    std::string want = std::filesystem::path(*w).lexically_normal().string();
    while (want.size() > 1 && want.back() == '/') want.pop_back();
    for (const auto& t : terminals) {
      if (t.cwd == want) out.push_back(t.handle);
    }
  } else {
    return InvalidArgument("to: unknown group '" + address +
                           "' (use @all, @idle, @family:F, @profile:P or @worktree:DIR)");
  }
  if (out.empty()) return NotFound("to: group " + address + " has no members");
  return out;
}

Status MessagingService::BindSender(SendInput& in, bool is_reply) {
  domain::MessageRecord& m = in.message;
  const domain::Caller& c = in.caller;
  auto refuse = [&](const std::string& why) {
    return refusals_ ? refusals_->Refuse(c, is_reply ? domain::Rpc::kReply : domain::Rpc::kSend, why)
                     : PermissionDenied(why);
  };
  if (!c.IsWorker()) {
    if (domain::IsReservedSender(m.from)) {
      return InvalidArgument("from: '" + m.from +
                             "' is reserved — only conclaved itself sends as it");
    }
    return Status::Ok();
  }
  if (c.role == domain::CallerRole::kUnboundWorker) {
    if (in.dispatch_token.empty()) {
      return refuse("a process started by a worker must present its dispatch token");
    }
    if (!is_reply && !domain::IsWorkerReportType(m.type)) {
      return refuse("a worker may send only worker_done, heartbeat, status, question or escalation");
    }
    return Status::Ok();  // the token binds it (CheckWorkerReport)
  }
  if (m.dispatch_id != 0 && m.dispatch_id != c.dispatch_id) {
    return refuse("dispatch " + std::to_string(m.dispatch_id) + " is not this worker's (its own is " +
                  std::to_string(c.dispatch_id) + ")");
  }
  if (!is_reply && !domain::IsWorkerReportType(m.type)) {
    return refuse("a worker may send only worker_done, heartbeat, status, question or escalation");
  }
  auto d = core_.dispatches.Get(c.dispatch_id);
  if (!d) return refuse("its dispatch is gone");
  if (!is_reply && !in.to.empty() && in.to != d->coordinator) {
    return refuse("a worker reports to its dispatch's coordinator ('" + d->coordinator +
                  "'), not to '" + in.to + "'");
  }
  m.dispatch_id = c.dispatch_id;
  m.task_id = c.task_id;
  m.from = c.terminal;  // a worker always speaks as its own terminal
  if (!is_reply) in.to = d->coordinator;
  return Status::Ok();
}

Status MessagingService::BindReader(const domain::Caller& caller, domain::Rpc rpc, std::string& to) {
  if (!caller.IsWorker()) return Status::Ok();
  if (caller.role != domain::CallerRole::kWorker || (!to.empty() && to != caller.terminal)) {
    std::string why = "a worker reads only what is addressed to its own handle '" +
                      caller.terminal + "'";
    return refusals_ ? refusals_->Refuse(caller, rpc, why) : PermissionDenied(why);
  }
  to = caller.terminal;
  return Status::Ok();
}

void MessagingService::Send(SendInput in, Done<SendResult> done) {
  bool is_reply = in.message.type == "reply" && in.message.reply_to != 0;
  WriteThen<SendResult>(
      core_,
      [&]() -> StatusOr<SendResult> {
        domain::MessageRecord& m = in.message;
        if (m.from.empty()) m.from = "coordinator";
        if (m.priority.empty()) m.priority = "normal";
        Status v = domain::ValidateMessage(m);
        if (!v.ok()) return v;
        if (m.from.size() > domain::kMaxHandleBytes) {
          return InvalidArgument("from: longer than " + std::to_string(domain::kMaxHandleBytes) +
                                 " bytes");
        }
        if (Status b = BindSender(in, is_reply); !b.ok()) return b;
        if (!in.dispatch_token.empty() || (m.type == "worker_done" && m.dispatch_id != 0)) {
          if (!reports_) return FailedPrecondition("dispatch_token: this daemon has no dispatches");
          Status w = reports_->CheckWorkerReport(m, in.dispatch_token);
          if (!w.ok()) return w;
          if (in.to.empty() || in.caller.IsWorker()) in.to = m.to;
        }
        auto recipients = ResolveAddress(in.to, m.from);
        if (!recipients.ok()) return recipients.status();
        SendResult result;
        result.thread_id = m.thread_id.empty() ? "t-" + RandomHex(6) : m.thread_id;
        int64_t now = core_.clock.NowMs();
        for (const auto& r : recipients.value()) {
          domain::MessageRecord copy = m;
          copy.to = r;
          copy.thread_id = result.thread_id;
          copy.created_ms = now;
          core_.Emit(copy);
          result.messages.push_back(std::move(copy));
        }
        return result;
      },
      std::move(done));
}

void MessagingService::Check(const domain::Caller& caller, const std::string& asked,
                             const std::vector<std::string>& types, bool peek, int limit,
                             Done<std::vector<domain::MessageRecord>> done) {
  std::string handle = asked;
  if (caller.IsWorker()) {
    if (handle.empty()) handle = caller.terminal;
    if (Status b = BindReader(caller, domain::Rpc::kCheck, handle); !b.ok()) return done(b);
  }
  WriteThen<std::vector<domain::MessageRecord>>(
      core_,
      [&]() -> StatusOr<std::vector<domain::MessageRecord>> {
        if (handle.empty()) return InvalidArgument("handle: required");
        if (!core_.handles.Get(handle)) return NotFound("handle: no handle named '" + handle + "'");
        for (const auto& t : types) {
          if (!domain::IsMessageType(t)) return InvalidArgument("types: unknown type '" + t + "'");
        }
        int n = limit <= 0 ? 1000 : std::min(limit, kMaxLimit);
        return core_.messages.TakeUnread(handle, types, n, peek);
      },
      std::move(done));
}

void MessagingService::Reply(const domain::Caller& caller, int64_t seq, const std::string& from,
                             domain::MessageRecord reply, Done<SendResult> done) {
  StatusOr<std::optional<domain::MessageRecord>> original = [&]() -> StatusOr<std::optional<domain::MessageRecord>> {
    try {
      return core_.messages.Get(seq);
    } catch (const store::StoreError& e) {
      return Internal(e.what());
    }
  }();
  if (!original.ok()) return done(original.status());
  if (!original.value()) return done(NotFound("id: no message with seq " + std::to_string(seq)));
  const domain::MessageRecord& o = **original;
  if (caller.IsWorker() && (caller.role != domain::CallerRole::kWorker || o.to != caller.terminal)) {
    std::string why = "a worker may reply only to messages addressed to its own handle";
    return done(refusals_ ? refusals_->Refuse(caller, domain::Rpc::kReply, why) : PermissionDenied(why));
  }
  SendInput in;
  in.caller = caller;
  in.to = o.from;
  in.message = std::move(reply);
  in.message.type = "reply";
  in.message.from = from.empty() ? o.to : from;
  in.message.thread_id = o.thread_id;
  in.message.reply_to = o.seq;
  if (in.message.subject.empty()) in.message.subject = "Re: " + o.subject;
  if (in.message.task_id == 0) in.message.task_id = o.task_id;
  if (in.message.dispatch_id == 0) in.message.dispatch_id = o.dispatch_id;
  Send(std::move(in), std::move(done));
}

Status MessagingService::ValidateFilter(const domain::MessageFilter& f) {
  if (f.types.size() > 64) return InvalidArgument("types: at most 64");
  if (f.task_ids.size() > 1000) return InvalidArgument("task_ids: at most 1000");
  for (int64_t t : f.task_ids) {
    // The task index holds only the messages of a task (migration 0016).
    if (t == 0) {
      return InvalidArgument("task_ids: 0 is no task (a message sent outside any task carries "
                             "0); leave task_ids empty to match messages of any task or none");
    }
  }
  for (const auto& t : f.types) {
    if (!domain::IsMessageType(t)) return InvalidArgument("types: unknown type '" + t + "'");
  }
  return Status::Ok();
}

std::vector<domain::MessageRecord> MessagingService::CommittedAfter(
    const domain::MessageFilter& filter, int64_t after_seq, int limit) {
  // This connection also sees the batch still open on it, which may yet roll back (and its
  // sequence numbers be given again). Only what has committed — published, so at most the
  // bus's last_seq — may be answered; the rest reaches a waiter or subscriber when it is
  // published. A cursor already at last_seq (a long-poll that keeps up) needs no read at all.
  int64_t committed = core_.bus.last_seq();
  if (after_seq >= committed) return {};
  auto page = core_.messages.After(filter, after_seq, limit);
  page.erase(std::find_if(page.begin(), page.end(),
                          [&](const domain::MessageRecord& m) { return m.seq > committed; }),
             page.end());
  return page;
}

StatusOr<std::vector<domain::MessageRecord>> MessagingService::Backlog(
    const domain::MessageFilter& filter, int64_t after_seq, int limit) {
  Status v = ValidateFilter(filter);
  if (!v.ok()) return v;
  return CommittedAfter(filter, after_seq, limit);
}

StatusOr<std::vector<domain::MessageRecord>> MessagingService::Inbox(
    const domain::Caller& caller, domain::MessageFilter filter, int limit) {
  if (Status b = BindReader(caller, domain::Rpc::kInbox, filter.to); !b.ok()) return b;
  Status v = ValidateFilter(filter);
  if (!v.ok()) return v;
  int n = limit <= 0 ? 50 : std::min(limit, kMaxLimit);
  return core_.messages.Newest(filter, n);
}

uint64_t MessagingService::Wait(const WaitInput& asked, Done<WaitResult> done) {
  WaitInput in = asked;
  if (Status b = BindReader(in.caller, domain::Rpc::kWait, in.filter.to); !b.ok()) {
    done(b);
    return 0;
  }
  Status v = ValidateFilter(in.filter);
  if (!v.ok()) {
    done(v);
    return 0;
  }
  if (in.after_seq < 0) {
    done(InvalidArgument("after_seq: must not be negative"));
    return 0;
  }
  if (in.timeout_ms < 0) {
    done(InvalidArgument("timeout_ms: must not be negative"));
    return 0;
  }
  int limit = in.limit <= 0 ? 100 : std::min(in.limit, kMaxLimit);
  int64_t after = in.from_now ? core_.bus.last_seq() : in.after_seq;
  auto found = CommittedAfter(in.filter, after, limit);
  if (!found.empty()) {
    WaitResult r;
    r.cursor = found.back().seq;
    r.messages = std::move(found);
    done(std::move(r));
    return 0;
  }
  int64_t timeout = in.timeout_ms == 0 ? kDefaultWaitMs : std::min(in.timeout_ms, kMaxWaitMs);
  std::vector<int64_t> tasks = in.filter.task_ids;
  return core_.bus.AddWaiter(
      in.filter, after, std::chrono::milliseconds(timeout), limit,
      [this, done = std::move(done), tasks, after](std::vector<domain::MessageRecord> ms) {
        WaitResult r;
        if (ms.empty()) {
          r.timed_out = true;
          r.cursor = std::max(after, core_.bus.last_seq());
          if (runs_ && !tasks.empty()) r.liveness = runs_->LivenessOf(tasks);
        } else {
          r.cursor = ms.back().seq;
          r.messages = std::move(ms);
        }
        done(std::move(r));
      });
}

}  // namespace conclave::service
