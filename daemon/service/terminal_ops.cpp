// TaskService: worker terminals (create, list, close/drain) and transcript reads.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "common/clock.h"
#include "common/random.h"
#include "service/task_service.h"

namespace conclave::service {
namespace fs = std::filesystem;

void TaskService::CreateTerminal(const std::string& profile, const std::string& handle,
                                 const std::string& cwd, Done<store::TerminalRecord> done) {
  WriteThen<store::TerminalRecord>(
      core_,
      [&]() -> StatusOr<store::TerminalRecord> {
        const exec::Profile* p = core_.profiles.Find(profile);
        if (!p) {
          return NotFound("profile: no profile named '" + profile +
                          "' (see `conclave profile list`)");
        }
        std::string name = handle;
        if (name.empty()) {
          for (int i = 1;; ++i) {
            name = profile + "-" + std::to_string(i);
            if (!core_.handles.Get(name)) break;
          }
        }
        Status v = domain::ValidateHandleName(name, "handle");
        if (!v.ok()) return v;
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
        store::TerminalRecord t{name, profile, abs.string(), "idle", 0, NowMs()};
        core_.handles.Insert({name, "terminal", t.created_ms, false});
        core_.terminals.Insert(t);
        return t;
      },
      std::move(done));
}

std::vector<store::TerminalRecord> TaskService::ListTerminals(bool include_closed) {
  return core_.terminals.List(include_closed);
}

StatusOr<store::TerminalRecord> TaskService::GetTerminal(const std::string& handle) {
  auto t = core_.terminals.Get(handle);
  if (!t) return NotFound("handle: no terminal named '" + handle + "'");
  return *t;
}

void TaskService::CloseTerminal(const std::string& handle, bool force,
                                Done<store::TerminalRecord> done) {
  int64_t to_stop = 0;
  WriteThen<store::TerminalRecord>(
      core_,
      [&]() -> StatusOr<store::TerminalRecord> {
        auto t = core_.terminals.Get(handle);
        if (!t) return NotFound("handle: no terminal named '" + handle + "'");
        if (t->state == "closed") return *t;
        if (t->state == "busy" && t->active_dispatch) {
          // Drain: refuse new work; the running dispatch finishes (or is stopped with --force),
          // and completion closes the terminal.
          t->state = "draining";
          core_.terminals.SetState(handle, "draining", t->active_dispatch);
          if (force) to_stop = t->active_dispatch;
        } else {
          t->state = "closed";
          core_.terminals.SetState(handle, "closed", 0);
          core_.handles.MarkClosed(handle);
        }
        return *t;
      },
      std::move(done));
  if (to_stop) {
    auto it = runs_.find(to_stop);
    if (it != runs_.end()) it->second.run->Stop("cancel: terminal closed with --force");
  }
}

StatusOr<TranscriptResult> TaskService::ReadTranscript(const std::string& handle,
                                                       int64_t dispatch_id, int64_t cursor,
                                                       int max_bytes) {
  if (cursor < 0) return InvalidArgument("cursor: must not be negative");
  auto t = core_.terminals.Get(handle);
  if (!t) return NotFound("handle: no terminal named '" + handle + "'");
  std::optional<store::DispatchRecord> d;
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
  std::string path = DispatchDir(d->id) + "/transcript.log";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    r.data.resize(static_cast<size_t>(n));
    ssize_t got = pread(fd, r.data.data(), r.data.size(), cursor);
    close(fd);
    r.data.resize(got > 0 ? static_cast<size_t>(got) : 0);
  }
  r.next_cursor = cursor + static_cast<int64_t>(r.data.size());
  bool done = d->state != "queued" && d->state != "running";
  r.eof = done && static_cast<int>(r.data.size()) < n;
  return r;
}

std::string TaskService::DispatchDir(int64_t id) const {
  return core_.config.state_dir + "/dispatches/" + std::to_string(id);
}

}  // namespace conclave::service
