// Doctor: checks each profile the way the daemon will spawn it — the CLI on the daemon's PATH
// (and its version), credential variables present (never printed), endpoint configured — and
// says how to fix what is not ready. Version probes run on a helper thread so the loop never
// blocks on a slow CLI.
#pragma once

#include <string>
#include <vector>

#include "service/core.h"
#include "service/messaging_service.h"

namespace conclave::service {

struct ProfileCheck {
  std::string profile, family, program, program_path, version;
  std::vector<std::string> ok, problems, fixes;
  bool ready() const { return problems.empty(); }
};

// Completes done on the loop thread.
void RunDoctor(Core& core, Done<std::vector<ProfileCheck>> done);

}  // namespace conclave::service
