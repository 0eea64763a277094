// The model a profile runs, resolved the way the daemon resolves the profile at spawn (the
// daemon's environment, ${env:NAME:-default} defaults), for the family check (domain/
// model_family.h) at dispatch time and for `conclave doctor`. Looked for, first match wins:
//   1. argv: --model X, --model=X, -m X;
//   2. env: ANTHROPIC_MODEL, OPENAI_MODEL, GEMINI_MODEL, OPENCODE_MODEL, CODEX_MODEL,
//      QWEN_MODEL;
//   3. a generated config file (`files`): a line `model = "X"` (toml) or `"model": "X"` (json).
// A reference that cannot be resolved (an unset variable without default) is skipped; ""
// when nothing names a model. Thread-safety: pure apart from ${file:...} references.
#pragma once

#include <map>
#include <string>

#include "exec/profile.h"

namespace conclave::exec {

std::string ResolveModelName(const Profile& p, const std::map<std::string, std::string>& daemon_env);

}  // namespace conclave::exec
