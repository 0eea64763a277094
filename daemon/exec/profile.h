// Profile: one model backend (which CLI, family, argv/env templates, parser, limits), loaded
// from profiles/*.json. An invalid file is reported with its path and field and skipped; the
// others still load. Template references (${env:NAME}, ${env:NAME:-default}, ${file:PATH},
// ${HOME}, ${TMPDIR}, ${DISPATCH_DIR}, ${CWD}, ${budget_usd}, ${findings_schema},
// ${findings_schema_file}) are resolved only at spawn time and never stored; values that look
// like credentials are returned for redaction.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "domain/cost.h"

namespace conclave::exec {

struct Profile {
  std::string name;
  std::string family;
  std::string type = "cli";  // "cli" (a model CLI) or "command" (any program: tests, linters)
  std::vector<std::string> command;
  std::string brief = "stdin";  // "stdin" | "arg"
  std::string parser = "text";
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> files;  // path template -> content template
  int timeout_s = 1800;
  int idle_timeout_s = 300;
  int max_concurrent = 1;
  bool isolate_home = false;
  std::string workdir = "terminal";  // "terminal": the terminal's cwd; "dispatch": a private dir
  std::string template_name;  // brief template under profiles/templates/, "" = plain
  std::vector<std::string> budget_flag;  // argv appended when a per-dispatch cap is set
  std::vector<std::string> review_args;  // argv appended for reviewer dispatches (legacy)
  // argv appended when the dispatch asks for a schema-shaped answer (a reviewer's findings):
  // ${findings_schema} is the schema's JSON text, ${findings_schema_file} a file holding it.
  std::vector<std::string> schema_args;
  // argv appended for a reviewer dispatch: the CLI's read-only / plan mode.
  std::vector<std::string> readonly_args;
  std::optional<bool> contract;  // require the worker contract (default: cli yes)
  bool trust_reported_cost = true;  // false: the CLI prices another vendor's model wrongly
  std::string version_command;           // for `conclave doctor`, e.g. "claude --version"
  domain::PriceTable price;  // USD per million tokens, validated at load
  std::string source_file;
};

struct ProfileLoadError {
  std::string file;
  std::string field;
  std::string error;
};

struct ProfileSet {
  std::vector<Profile> profiles;  // sorted by name
  std::vector<ProfileLoadError> errors;
  const Profile* Find(const std::string& name) const;
};

ProfileSet LoadProfiles(const std::string& dir);
// Parses one profile document; errors name the field.
StatusOr<Profile> ParseProfile(const nlohmann::json& j, const std::string& file,
                               std::string* bad_field);

// Context for template resolution at spawn.
struct TemplateContext {
  std::map<std::string, std::string> vars;  // HOME, TMPDIR, DISPATCH_DIR, CWD, budget_usd ...
  const std::map<std::string, std::string>* environ = nullptr;  // the daemon's environment
};

struct Resolved {
  std::string value;
  std::vector<std::string> secrets;  // substrings to redact
};

// Resolves ${...} references in text. `key` is the env var or file being produced; when it or
// a referenced variable name looks like a credential, the resolved values become secrets.
StatusOr<Resolved> ResolveTemplate(const std::string& text, const std::string& key,
                                   const TemplateContext& ctx);

bool LooksLikeSecretName(const std::string& name);

}  // namespace conclave::exec
