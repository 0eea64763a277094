// LaunchPlan: everything needed to start one worker, assembled from the profile and the
// dispatch — argv, environment, working directory, the brief (stdin or last argument), files
// to write into the isolated HOME, and the secrets to redact. A reviewer dispatch also gets
// the findings schema (${findings_schema}, and ${findings_schema_file}: findings_schema.json
// written into the dispatch directory) with the profile's schema_args, then its readonly_args
// (the CLI's read-only / plan mode), and may run in a directory of its own (workdir) with its
// isolated HOME outside the state directory (private_dir). PlanLaunch only computes (no
// I/O); PrepareLaunch creates the directories and writes the files, on the launcher's thread
// (PrepareSpawn). `conclave doctor` uses
// the same environment and template rules (DaemonEnvironment, TemplateContextFor), so what it
// checks is what the daemon will spawn.
// A worker's environment is an allow-list of the daemon's (PATH, locale, TZ, TERM, USER,
// LOGNAME, SHELL, HOME, TMPDIR, proxy and CA variables), the profile's inherit_env names, the
// profile's env and this dispatch's CONCLAVE_* variables — never the daemon's own credentials.
// Thread-safety: pure functions; PrepareLaunch does file I/O.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "exec/child_process.h"
#include "exec/profile.h"
#include "exec/sandbox.h"

namespace conclave::exec {

// What the launcher's thread reports of a launch (exec/launcher.h): read on the loop.
struct LaunchProgress {
  // The launcher's thread is on this launch: preparing it, or spawning (the child exists once
  // the spec's early_pid holds its pid). Cleared when the thread is done with it.
  std::atomic<bool> on_thread{false};
  // Set on the loop when the launch is given up while still on the thread (stuck in a
  // filesystem call or an unkillable wait): its `launched` is never called, and a child it
  // still makes is killed and reaped without being run.
  std::atomic<bool> given_up{false};
  // The HEAD commit of plan.head_of, read just before the spawn ("" when none). Written on
  // the launcher's thread before `launched` is posted to the loop.
  std::string start_head;
  // A file of the repository was held by a file lease no one let go of: start_head is
  // unknown (GitHead::leased). Written with start_head.
  bool head_leased = false;
};

struct LaunchRequest {
  const Profile* profile = nullptr;
  std::string terminal;      // handle
  std::string terminal_cwd;  // the terminal's directory
  std::string dispatch_dir;  // STATE_DIR/dispatches/<id>
  std::string socket;        // the daemon's unix socket path, for CONCLAVE_SOCKET
  std::string state_dir;     // hidden from a sandboxed worker
  std::string config_file;   // its directory hidden from a sandboxed worker ("" = none)
  std::string token;         // the dispatch token (a secret)
  std::string brief;         // rendered
  int64_t task_id = 0, dispatch_id = 0;
  double budget_usd = 0;
  bool reviewer = false;
  std::string workdir;      // the run's working directory when set (a reviewer's round dir)
  std::string private_dir;  // where the isolated HOME/TMPDIR go when set (else dispatch_dir)
  const std::map<std::string, std::string>* daemon_env = nullptr;
  // WorkerBaseEnv(*profile, *daemon_env) computed once, when the caller keeps it; else
  // PlanLaunch computes it.
  const std::map<std::string, std::string>* base_env = nullptr;
};

struct LaunchPlan {
  SpawnSpec spec;
  std::string stdin_data;
  std::vector<std::string> secrets;
  // Created 0700 before the spawn; the dispatch directory first, when anything needs it
  // before the worker's first output.
  std::vector<std::string> dirs;
  std::vector<std::pair<std::string, std::string>> files;  // written 0600 before the spawn
  std::vector<std::string> home_files_spec;                // the profile's "~/..." names
  std::vector<std::pair<std::string, std::string>> home_files;  // (real path, isolated path)
  std::vector<std::pair<std::string, std::string>> files_readonly;  // copied home files, 0400
  std::string transcript_path, stdout_path;
  // Profile "sandbox": "bwrap": PrepareLaunch resolves these paths and wraps spec.argv in
  // bubblewrap (exec/sandbox).
  bool sandboxed = false;
  SandboxPaths sandbox;
  // The environment entries that mark every process of this run (exec/run_tree): how its
  // processes are found after they left its process group.
  std::vector<std::string> tree_env;
  // Set by the loop when the run is stopped before its spawn began: the spawn is not made.
  std::shared_ptr<std::atomic<bool>> abandoned = std::make_shared<std::atomic<bool>>(false);
  // A writer's directory: its git HEAD is read (exec/git_head) into progress->start_head just
  // before the spawn, before the worker can change anything. "" for anyone else.
  std::string head_of;
  std::shared_ptr<LaunchProgress> progress = std::make_shared<LaunchProgress>();
};

StatusOr<LaunchPlan> PlanLaunch(const LaunchRequest& req);
// What a sandboxed profile's worker in `cwd` may not see (the daemon's state, socket, config
// and runtime directories) and its HOME; unresolved (ResolveSandboxPaths). The daemon's own git
// for such a terminal runs in the read-only variant (exec/confined_runner).
SandboxPaths SandboxPathsFor(const Profile& p, const std::string& cwd, const std::string& state_dir,
                             const std::string& socket, const std::string& config_file,
                             const std::map<std::string, std::string>& daemon_env);
// Creates the directories, writes the files, copies home_files (their credential-like contents
// join the plan's secrets); for a sandboxed profile, wraps the command in bwrap.
Status PrepareLaunch(LaunchPlan& plan);
// What a launcher does on its own thread before the spawn: PrepareLaunch, then head_of's HEAD.
// Everything here may touch the worker's filesystem, which may hang: never on the loop.
Status PrepareSpawn(LaunchPlan& plan);

// Credential-like tokens inside a file (runs of 20+ token characters), for redaction.
std::vector<std::string> CredentialTokens(const std::string& content);

// The daemon's environment without the variables that belong to one process (a dispatch's
// CONCLAVE_DISPATCH_* / CONCLAVE_TASK_*, systemd's NOTIFY_SOCKET, WATCHDOG_*, LISTEN_*).
std::map<std::string, std::string> DaemonEnvironment();

// What a worker of profile p gets of the daemon's environment: an allow-list (PATH, the
// locale, proxies, ...) and the profile's inherit_env — never a CONCLAVE_* variable. The
// same for every dispatch of p.
std::map<std::string, std::string> WorkerBaseEnv(const Profile& p,
                                                 const std::map<std::string, std::string>& daemon);

// A template context over the daemon's environment with the given variables.
TemplateContext TemplateContextFor(const std::map<std::string, std::string>& daemon_env,
                                   std::map<std::string, std::string> vars);

}  // namespace conclave::exec
