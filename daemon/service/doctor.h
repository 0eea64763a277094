// Doctor: checks each profile the way the daemon will spawn it — the CLI on the daemon's PATH
// (and its version), credential variables present (never printed), endpoint configured — and
// says how to fix what is not ready — with the environment and template rules the launcher uses
// (exec/launch_plan). Version probes run on the helper pool so the loop never blocks on a slow
// CLI. It also says whether bubblewrap can run here (probed on the helper pool) — a problem for
// a profile that asks for "sandbox": "bwrap", advice to turn it on for a CLI profile that does
// not — and checks the profile's family against the model it resolves to
// (domain/model_family.h): an unknown model name or a family that does not match is a warning.
// Loop thread only.
#pragma once

#include <string>
#include <vector>

#include "service/core.h"
#include "service/write_then.h"

namespace conclave::service {

struct ProfileCheck {
  std::string profile, family, program, program_path, version;
  std::string type, sandbox;  // the profile's
  std::vector<std::string> ok, problems, fixes, advice;
  std::vector<std::string> warnings;  // not blocking (e.g. a model name the family table lacks)
  bool ready() const { return problems.empty(); }
};

struct DoctorReport {
  std::vector<ProfileCheck> profiles;
  bool sandbox_runs = false;
  std::string sandbox;  // whether bubblewrap can run here, in words
  std::vector<std::string> daemon_warnings;
};

class Doctor {
 public:
  explicit Doctor(Core& core) : core_(core) {}
  // Completes done on the loop thread.
  void Run(Done<DoctorReport> done);

 private:
  Core& core_;
};

}  // namespace conclave::service
