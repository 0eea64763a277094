#include "service/terminal_service.h"

#include "common/read_file.h"
#include "domain/flow.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

namespace conclave::service {
namespace fs = std::filesystem;
using domain::TerminalState;

Status TerminalService::Move(domain::Terminal& t, TerminalState to, int64_t active_dispatch) {
  Status s = domain::MoveTerminal(t, to, active_dispatch);
  if (!s.ok()) return s;
  core_.terminals.Save(t);
  if (to == TerminalState::kClosed) core_.handles.MarkClosed(t.handle);
  return Status::Ok();
}

void TerminalService::Create(const std::string& profile, const std::string& handle,
                             const std::string& cwd, bool exclusive, Done<TerminalView> done) {
  WriteThen<TerminalView>(
      core_,
      [&]() -> StatusOr<TerminalView> {
        if (!core_.profiles.Find(profile)) {
          return NotFound("profile: no profile named '" + profile +
                          "' (see `conclave profile list`)");
        }
        std::string name = handle;
        for (int i = 1; name.empty(); ++i) {
          std::string candidate = profile + "-" + std::to_string(i);
          if (!core_.handles.Get(candidate)) name = candidate;
        }
        Status v = domain::ValidateHandleName(name, "handle");
        if (!v.ok()) return v;
        if (name.rfind("flow-", 0) == 0) {
          return InvalidArgument("handle: names starting with 'flow-' belong to flows");
        }
        if (auto existing = core_.handles.Get(name)) {
          return Status(Code::kAlreadyExists,
                        "handle: '" + name + "' is taken" +
                            (existing->closed ? " (closed handles are never reissued)" : ""));
        }
        std::string dir = cwd.empty() ? fs::current_path().string() : cwd;
        std::error_code ec;
        fs::path abs = fs::weakly_canonical(fs::absolute(dir), ec);
        if (ec || !fs::is_directory(abs)) {
          return InvalidArgument("cwd: '" + dir + "' is not a directory");
        }
        domain::Terminal t{name, profile, abs.string(), TerminalState::kIdle, 0,
                           core_.clock.NowMs(), exclusive};
        core_.handles.Insert({name, "terminal", t.created_ms, false});
        core_.terminals.Insert(t);
        return View(t);
      },
      std::move(done));
}

std::vector<TerminalView> TerminalService::List(bool include_closed) {
  std::vector<TerminalView> out;
  for (const auto& t : core_.terminals.List(include_closed)) out.push_back(View(t));
  return out;
}

StatusOr<TerminalView> TerminalService::Get(const std::string& handle) {
  auto t = core_.terminals.Get(handle);
  if (!t) return NotFound("handle: no terminal named '" + handle + "'");
  return View(*t);
}

void TerminalService::Close(const std::string& handle, bool force, Done<TerminalView> done) {
  int64_t to_stop = 0;
  WriteThen<TerminalView>(
      core_,
      [&]() -> StatusOr<TerminalView> {
        auto t = core_.terminals.Get(handle);
        if (!t) return NotFound("handle: no terminal named '" + handle + "'");
        if (t->state == TerminalState::kClosed) return View(*t);
        if (t->state == TerminalState::kBusy && t->active_dispatch) {
          // Drain: refuse new work; the running dispatch finishes (or is stopped with
          // --force), and its completion closes the terminal.
          if (Status s = Move(*t, TerminalState::kDraining, t->active_dispatch); !s.ok()) return s;
          if (force) to_stop = t->active_dispatch;
        } else if (Status s = Move(*t, TerminalState::kClosed); !s.ok()) {
          return s;
        }
        return View(*t);
      },
      std::move(done));
  if (to_stop && runs_) {
    runs_->StopRun(to_stop, domain::StopReason::kCancelled, "cancel: terminal closed with --force");
  }
}

void TerminalService::ReleaseAfterRun(const std::string& handle, int64_t dispatch_id) {
  auto t = core_.terminals.Get(handle);
  if (!t) return;
  if (t->state == TerminalState::kDraining) {
    (void)Move(*t, TerminalState::kClosed);
  } else if (t->state == TerminalState::kBusy && t->active_dispatch == dispatch_id) {
    (void)Move(*t, TerminalState::kIdle);
  }
}

std::string TerminalService::EnsureFor(const std::string& profile, const std::string& cwd,
                                       const std::string& prefix) {
  for (const auto& t : core_.terminals.List(false)) {
    // Never a flow's own terminal (it takes only that flow's steps) or one in a flow worktree.
    if (domain::FlowOfTerminal(t.handle) != 0 || core_.InFlowWorktree(t.cwd)) continue;
    if (t.profile == profile && t.state != TerminalState::kDraining) return t.handle;
  }
  std::error_code ec;
  fs::create_directories(cwd, ec);
  std::string handle = prefix + profile;
  for (int i = 2; core_.handles.Get(handle); ++i) handle = prefix + profile + "-" + std::to_string(i);
  domain::Terminal t{handle, profile, cwd, TerminalState::kIdle, 0, core_.clock.NowMs()};
  core_.handles.Insert({handle, "terminal", t.created_ms, false});
  core_.terminals.Insert(t);
  return handle;
}

StatusOr<TranscriptResult> TerminalService::ReadTranscript(const std::string& handle,
                                                           int64_t dispatch_id, int64_t cursor,
                                                           int max_bytes) {
  if (cursor < 0) return InvalidArgument("cursor: must not be negative");
  auto t = core_.terminals.Get(handle);
  if (!t) return NotFound("handle: no terminal named '" + handle + "'");
  std::optional<domain::Dispatch> d;
  if (dispatch_id) {
    d = core_.dispatches.Get(dispatch_id);
    if (!d || d->terminal != handle) {
      return NotFound("dispatch: " + std::to_string(dispatch_id) + " did not run on " + handle);
    }
  } else {
    d = core_.dispatches.LatestForTerminal(handle);
    if (!d) return NotFound("handle: terminal '" + handle + "' has run no dispatch yet");
  }
  int n = max_bytes <= 0 ? 65536 : std::min(max_bytes, 4 << 20);
  TranscriptResult r;
  r.dispatch_id = d->id;
  std::string path = core_.DispatchDir(d->id) + "/transcript.log";
  // Only the regular file the daemon wrote: a FIFO put in its place never stalls the loop.
  int fd = OpenRegularFile(path.c_str(), O_NOFOLLOW);
  if (fd >= 0) {
    r.data.resize(static_cast<size_t>(n));
    ssize_t got = pread(fd, r.data.data(), r.data.size(), cursor);
    close(fd);
    r.data.resize(got > 0 ? static_cast<size_t>(got) : 0);
  }
  r.next_cursor = cursor + static_cast<int64_t>(r.data.size());
  r.eof = domain::DispatchEnded(d->state) && static_cast<int>(r.data.size()) < n;
  return r;
}

}  // namespace conclave::service
