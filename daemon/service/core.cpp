#include "service/core.h"

#include <boost/asio/post.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/random.h"
#include "common/thread_name.h"
#include "common/utf8.h"
#include "exec/child_process.h"
#include "exec/launch_plan.h"

namespace conclave::service {

Core::Core(boost::asio::io_context& io_ctx, const config::Config& cfg, store::Database& database,
           Clock& clk, exec::Launcher& launch, exec::CommandRunner& cmds)
    : io(io_ctx),
      config(cfg),
      db(database),
      clock(clk),
      launcher(launch),
      commands(cmds),
      messages(database),
      handles(database),
      terminals(database),
      tasks(database),
      dispatches(database),
      gates(database),
      cooldowns(database),
      spend(database),
      bus(io_ctx),
      batcher(io_ctx, database, clk, [this](const auto& ms) { bus.Publish(ms); }) {
  // The helpers' CPU work (reading and parsing a finished run's output, git) gives way to the
  // loop on a busy machine, as the workers' does (README, Architecture: scheduling). Their jobs
  // share no lock with the loop but short ones (the log sink's, the child registry's, asio's
  // queue): the loop can wait on a preempted helper only there, as on the log writer.
  NamePoolThreads(helpers, kHelperThreads, "helper", exec::NiceThisThreadAsChildren);
  NamePoolThreads(notifier, 1, "notifier");
}

void Core::Emit(domain::MessageRecord& m) {
  // Whatever a worker echoes into a message, no standing secret reaches the store.
  m.subject = Utf8Prefix(redactor.Apply(m.subject), domain::kMaxSubjectBytes);
  m.body = Utf8Prefix(redactor.Apply(m.body), domain::kMaxBodyBytes);
  m.payload = ValidUtf8(redactor.Apply(m.payload));
  if (m.created_ms == 0) m.created_ms = clock.NowMs();
  if (m.thread_id.empty()) m.thread_id = "t-" + RandomHex(6);
  messages.Insert(m);
  batcher.Publish(m);
}

void Core::Notify(const Notice& n) {
  domain::MessageRecord m;
  m.type = n.type;
  m.priority = n.priority;
  m.from = std::string(domain::kDaemonSender);
  m.to = n.to.empty() ? "coordinator" : n.to;
  m.subject = n.subject;
  m.body = n.body;
  m.payload = n.payload;
  m.task_id = n.task_id;
  m.dispatch_id = n.dispatch_id;
  m.thread_id = n.task_id ? "task-" + std::to_string(n.task_id) : "";
  Emit(m);
  if (!config.notify_command.empty() && domain::WorthNotifying(m)) NotifyPerson(m);
}

void Core::NotifyPerson(const domain::MessageRecord& m) {
  nlohmann::json event = {{"type", m.type},        {"priority", m.priority},
                          {"subject", m.subject},  {"body", m.body},
                          {"task_id", m.task_id},  {"dispatch_id", m.dispatch_id},
                          {"to", m.to},            {"created_ms", m.created_ms}};
  auto payload = nlohmann::json::parse(m.payload, nullptr, false);
  if (!payload.is_discarded()) event["payload"] = payload;
  std::string line = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  // Only once it is committed, and off the loop on its own thread: the command may be slow.
  batcher.AfterCommit([this, line](bool ok) {
    if (!ok) return;
    boost::asio::post(notifier, [this, line] {
      exec::CommandResult r = commands.RunWithInput(config.notify_command, "/", line, 10000);
      if (r.exit_code != 0) {
        spdlog::warn("notify_command {} failed (exit {}{})", config.notify_command[0], r.exit_code,
                     r.timed_out ? ", timed out after 10 s" : "");
      }
    });
  });
}

std::string Core::FamilyOf(const domain::Terminal& t) const {
  const exec::Profile* p = profiles.Find(t.profile);
  return p ? p->family : "";
}

std::string Core::DispatchDir(int64_t id) const {
  return config.state_dir + "/dispatches/" + std::to_string(id);
}

bool Core::InFlowWorktree(const std::string& cwd) const {
  if (flow_root_.empty() && !config.flow.worktree_root.empty()) {
    std::error_code ec;
    flow_root_ = std::filesystem::weakly_canonical(config.flow.worktree_root, ec).string();
    if (ec || flow_root_.empty()) flow_root_ = config.flow.worktree_root;
    while (flow_root_.size() > 1 && flow_root_.back() == '/') flow_root_.pop_back();
  }
  const std::string& root = flow_root_;
  return !root.empty() && cwd.size() > root.size() && cwd.compare(0, root.size(), root) == 0 &&
         cwd[root.size()] == '/';
}

std::optional<exec::SandboxPaths> Core::GitSandboxFor(const exec::Profile* p,
                                                      const std::string& cwd) {
  auto paths = [&](const exec::Profile& of) {
    return exec::SandboxPathsFor(of, cwd, config.state_dir, SocketPath(), config.config_file,
                                 daemon_env);
  };
  if (p && p->sandbox == "bwrap") return paths(*p);
  // A directory a sandboxed terminal's worker can write (its own, one below it, or its
  // repository's .git from one above) holds whatever that worker left there: git in it runs
  // confined for every terminal.
  auto under = [](const std::string& path, const std::string& dir) {
    return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                           (dir.back() == '/' || path[dir.size()] == '/'));
  };
  // With no sandboxed profile, or without bubblewrap, no sandboxed worker runs: nothing of
  // one's is there (and nothing is read from the store or the file system for it).
  bool any_sandboxed = false;
  for (const auto& q : profiles.profiles) any_sandboxed |= q.sandbox == "bwrap";
  if (!any_sandboxed) return std::nullopt;
  if (!bwrap_found_) {  // only a find is kept: bwrap installed later counts at once
    auto path = daemon_env.find("PATH");
    bwrap_found_ =
        !exec::FindOnPath("bwrap", {"PATH=" + (path == daemon_env.end() ? "" : path->second)})
             .empty();
    if (!bwrap_found_) return std::nullopt;
  }
  for (const auto& t : terminals.List(false)) {
    const exec::Profile* q = profiles.Find(t.profile);
    if (q && q->sandbox == "bwrap" && (under(cwd, t.cwd) || under(t.cwd, cwd))) {
      return paths(p ? *p : *q);
    }
  }
  return std::nullopt;
}

std::string Core::SocketPath() const {
  return listener.rfind("unix:", 0) == 0 ? listener.substr(5) : listener;
}

}  // namespace conclave::service
