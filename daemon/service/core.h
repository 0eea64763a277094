// Core: what every service part shares — the loop, the clock, the config, the store and its
// repositories, the commit batcher, the event bus, the loaded profiles, the launcher and the
// helper pool for work that must not run on the loop. Owned by main (or a test); the parts
// hold a reference. Loop thread only (the helper pool's threads touch none of it).
#pragma once

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <map>
#include <optional>
#include <string>

#include "common/clock.h"
#include "config/config.h"
#include "events/event_bus.h"
#include "exec/activity_probe.h"
#include "exec/command_runner.h"
#include "exec/launcher.h"
#include "exec/profile.h"
#include "exec/redactor.h"
#include "exec/sandbox.h"
#include "service/commit_batcher.h"
#include "service/snapshot_reader.h"
#include "store/cooldown_store.h"
#include "store/database.h"
#include "store/dispatch_store.h"
#include "store/gate_store.h"
#include "store/handle_store.h"
#include "store/message_store.h"
#include "store/spend_store.h"
#include "store/task_store.h"
#include "store/terminal_store.h"

namespace conclave::service {

// A message the daemon itself sends (always from domain::kDaemonSender).
struct Notice {
  std::string to;  // "" = the coordinator
  std::string type;
  std::string priority = "normal";
  int64_t task_id = 0, dispatch_id = 0;
  std::string subject, body, payload;
};

class DispatchSockets;

struct Core {
  Core(boost::asio::io_context& io_ctx, const config::Config& cfg, store::Database& database,
       Clock& clk, exec::Launcher& launch, exec::CommandRunner& cmds);

  boost::asio::io_context& io;
  const config::Config& config;
  store::Database& db;
  Clock& clock;
  exec::Launcher& launcher;
  exec::CommandRunner& commands;
  store::MessageStore messages;
  store::HandleStore handles;
  store::TerminalStore terminals;
  store::TaskStore tasks;
  store::DispatchStore dispatches;
  store::GateStore gates;
  store::CooldownStore cooldowns;
  store::SpendStore spend;
  events::EventBus bus;
  CommitBatcher batcher;
  exec::ProfileSet profiles;
  static constexpr int kHelperThreads = 2;
  boost::asio::thread_pool helpers{kHelperThreads};  // git, big reads, version probes: off the loop
  // notify_command runs here, one at a time: a slow one never holds a helper.
  boost::asio::thread_pool notifier{1};
  // Reads that walk history (the report), on their own thread and connection.
  SnapshotReader snapshots{io, db};
  // Reads a run's CPU and I/O from /proc (on the helper pool); tests put a fake here.
  std::shared_ptr<exec::ActivityProbe> activity = std::make_shared<exec::ProcActivityProbe>();
  // Read once at start (exec::DaemonEnvironment). Fixed after Services::Start, like profiles:
  // RunSupervisor keeps each profile's worker base environment built from both.
  std::map<std::string, std::string> daemon_env;
  exec::Redactor redactor;  // the daemon's standing secrets (exec::DaemonSecrets)
  int64_t started_ms = 0;
  const pid_t pid = getpid();  // GetStatus's, read once (glibc does not cache it)
  std::string listener;
  // Sandboxed workers' own sockets (api/DispatchSocketListener); none in service tests.
  DispatchSockets* dispatch_sockets = nullptr;

  // Appends a message to the log and queues it for waiters (call inside batcher.Write).
  void Emit(domain::MessageRecord& m);
  // Emits a message from the daemon (call inside batcher.Write).
  void Notify(const Notice& n);
  // Runs config.notify_command with the message as JSON (after commit, on the helper pool).
  void NotifyPerson(const domain::MessageRecord& m);

  // Family of a terminal's profile ("" when the profile is gone).
  std::string FamilyOf(const domain::Terminal& t) const;
  // STATE_DIR/dispatches/<id>.
  std::string DispatchDir(int64_t id) const;
  // The daemon's unix socket path (the listener as given when it is not a unix socket).
  std::string SocketPath() const;
  // The sandbox the daemon's own git in `cwd` runs in, read-only (exec::ConfinedRunner): for
  // a sandboxed profile's terminal, and for any terminal whose directory is inside or above a
  // sandboxed terminal's; nullopt otherwise. Reads the terminals (the loop).
  std::optional<exec::SandboxPaths> GitSandboxFor(const exec::Profile* p,
                                                  const std::string& cwd);
  // Whether cwd lies inside a flow's worktree (under flow.worktree_root, symlinks resolved).
  bool InFlowWorktree(const std::string& cwd) const;
  mutable std::string flow_root_;  // flow.worktree_root made canonical, on first use
  bool bwrap_found_ = false;  // bwrap seen on the daemon's PATH (looked up until it is)
};

}  // namespace conclave::service
