// Launcher: starts a worker run from a LaunchPlan — the seam between the service layer and the
// operating system. ProcessLauncher is the real one: a CLONE_VFORK spawn (exec/vfork_exec) into its
// own process group, watched through a pidfd by a WorkerRun on the loop. Tests substitute a fake
// (tests/support/fake_launcher.h) that finishes runs on command, so scheduling, retries and the
// breaker are tested without processes or sleeps.
// Thread-safety: loop thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "common/status.h"
#include "exec/launch_plan.h"
#include "exec/run_tree.h"
#include "exec/run_types.h"

namespace conclave::exec {

class Launcher {
 public:
  virtual ~Launcher() = default;
  // Starts the run; on_finished is called exactly once, later, on the loop.
  virtual StatusOr<std::shared_ptr<RunHandle>> Launch(const LaunchPlan& plan,
                                                      const RunLimits& limits, RunCallbacks cb) = 0;
};

class ProcessLauncher final : public Launcher {
 public:
  explicit ProcessLauncher(boost::asio::io_context& io) : io_(io) {}
  StatusOr<std::shared_ptr<RunHandle>> Launch(const LaunchPlan& plan, const RunLimits& limits,
                                              RunCallbacks cb) override;

 private:
  boost::asio::io_context& io_;
  TreeSweeper sweeper_;  // stops what left a run's process group, off the loop
};

}  // namespace conclave::exec
