// The daemon's standing secrets: values it holds that a worker must never see echoed back into
// the store or the log — its environment's credential-named variables (a name containing KEY,
// TOKEN, SECRET or PASSWORD), every profile's credential values resolved from ${env:} and
// ${file:}, and the credential-like contents of profiles' home_files. Values shorter than 8
// bytes are left out (they would redact ordinary words). Reads files: call it at startup.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "exec/profile.h"

namespace conclave::exec {

std::vector<std::string> DaemonSecrets(const std::map<std::string, std::string>& daemon_env,
                                       const ProfileSet& profiles);

}  // namespace conclave::exec
