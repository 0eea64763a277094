#include "exec/launcher.h"

#include "exec/worker_run.h"

namespace conclave::exec {

StatusOr<std::shared_ptr<RunHandle>> ProcessLauncher::Launch(const LaunchPlan& plan,
                                                             const RunLimits& limits,
                                                             RunCallbacks cb) {
  auto child = SpawnChild(plan.spec, PipeMode::kAsio);  // WorkerRun's pipes are asio's
  if (!child.ok()) return child.status();
  auto run = std::make_shared<WorkerRun>(io_, child.value(), plan.stdin_data, plan.transcript_path,
                                         plan.stdout_path, plan.secrets, limits, std::move(cb));
  run->SweepTree(&sweeper_, plan.tree_env, plan.sandboxed);
  run->Start();
  return std::shared_ptr<RunHandle>(run);
}

}  // namespace conclave::exec
