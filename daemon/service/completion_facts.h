// Completion facts: what the daemon learns about a finished run before it decides anything —
// the tail of its stdout parsed by the profile's parser, the worker contract, the written ≠
// persisted check of a writer's claims (git), the cost. Gathering reads up to 8 MiB and runs
// git, so it runs on the helper pool: GatherFacts takes a snapshot made on the loop and touches
// nothing the loop owns. A run that printed little (RunCompletion's kInlineFactsBytes) is read
// and parsed on the loop with GatherFactsWithoutCommands, which runs and stitches nothing and
// gives up when the facts need more: git, or a stdout.log that is big or not a regular file.
// Thread-safety: both may run on any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "domain/cost.h"
#include "domain/dispatch.h"
#include "domain/outcome.h"
#include "domain/task.h"
#include "exec/command_runner.h"
#include "exec/output_parser.h"
#include "exec/profile.h"
#include "exec/run_types.h"
#include "exec/sandbox.h"
#include "exec/worktree_check.h"

namespace conclave::service {

// Which process a run was and where a writer started: known at the spawn, written to the store
// with the outcome when the run ended before they were committed on their own.
struct LaunchRecord {
  int pid = 0;
  int64_t proc_start = 0;
  std::string start_head;
};
inline void ApplyLaunchRecord(domain::Dispatch& d, const LaunchRecord& r) {
  d.pid = r.pid;
  d.proc_start = r.proc_start;
  d.start_head = r.start_head;
}

// Read on the loop when the run finished.
struct CompletionSnapshot {
  domain::Dispatch dispatch;
  domain::Task task;
  std::optional<exec::Profile> profile;  // nullopt when the profile is gone
  std::string terminal_cwd;
  std::string dispatch_dir;
  int64_t now_ms = 0;
  int64_t log_cap_bytes = 0;  // the cap the run's logs were written with (stitched first)
  // A fresh writer attempt's files that were already dirty at its start (null = not known).
  std::shared_ptr<const exec::DirtyFiles> dirty_at_start;
  // A sandboxed terminal's: the claims check's git runs in it, read-only (Core::GitSandboxFor).
  std::optional<exec::SandboxPaths> git_sandbox;
};

struct CompletionFacts {
  exec::ParsedOutput parsed;
  domain::RunFacts run;
  domain::OutputFacts output;
  domain::ContractFacts contract;
  bool ran_clean = false;  // no stop, timeout, parsed failure or non-zero exit
  domain::Cost cost;
  nlohmann::json result = nlohmann::json::object();  // stored as the dispatch's result
  // DumpJson(result), made where the facts are gathered: up to 64 KiB of answer text printed
  // with escapes costs a few ms, which belongs on the helpers, not on the loop.
  std::string result_text;
};

// The stored text of a JSON value: compact, invalid UTF-8 replaced.
std::string DumpJson(const nlohmann::json& j);

CompletionFacts GatherFacts(const CompletionSnapshot& snap, const exec::RunOutcome& outcome,
                            double probed_cost, exec::CommandRunner& commands);
// The same facts when gathering them runs no command and reads at most max_read bytes of a
// regular stdout.log (never blocking on it); nullopt otherwise (a writer's claimed files are
// checked with git).
std::optional<CompletionFacts> GatherFactsWithoutCommands(const CompletionSnapshot& snap,
                                                          const exec::RunOutcome& outcome,
                                                          double probed_cost, size_t max_read);

}  // namespace conclave::service
