// Profile: one model backend (which CLI, family, argv/env templates, parser, limits), loaded
// from profiles/*.json. An invalid file is reported with its path and field and skipped; the
// others still load. Template references (${env:NAME}, ${env:NAME:-default}, ${file:PATH},
// ${HOME}, ${TMPDIR}, ${DISPATCH_DIR}, ${CWD}, ${budget_usd}, ${BRIEF_FILE},
// ${findings_schema}, ${findings_schema_file}) are resolved only at spawn time and never
// stored; values that look like credentials are returned for redaction. Pure data and pure
// functions apart from LoadProfiles (reads the directory): safe from any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
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
  // The template's text, read once with the profile by LoadProfiles (nullopt when it could not
  // be read then: each dispatch tries the file again).
  std::optional<std::string> template_text;
  // How a brief larger than kMaxArgBriefBytes reaches a CLI whose "brief" is "arg" (the
  // kernel refuses one argument over 128 KiB with E2BIG): "" (not at all: such a dispatch
  // fails with a clear error), "stdin", or "args" (brief_large_args replace the brief
  // argument; they name the rendered brief file with ${BRIEF_FILE}).
  std::string brief_large;
  std::vector<std::string> brief_large_args;
  std::vector<std::string> budget_flag;  // argv appended when a per-dispatch cap is set
  std::vector<std::string> review_args;  // argv appended for reviewer dispatches (legacy)
  // argv appended when the dispatch asks for a schema-shaped answer (a reviewer's findings):
  // ${findings_schema} is the schema's JSON text, ${findings_schema_file} a file holding it.
  std::vector<std::string> schema_args;
  // argv appended for a reviewer dispatch: the CLI's read-only / plan mode.
  std::vector<std::string> readonly_args;
  // Trust: a worker's environment is an allow-list (see exec/launch_plan) plus `env`; these
  // name more of the daemon's variables to pass, and files copied read-only from the real HOME
  // into the isolated one ("~/.codex/auth.json") for CLIs logged in without an API key.
  std::vector<std::string> inherit_env;
  std::vector<std::string> home_files;
  std::string sandbox;  // "" or "bwrap": run the worker under bubblewrap
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

// The largest brief passed as one argument; past it "brief_large" applies.
inline constexpr size_t kMaxArgBriefBytes = 100 * 1024;

enum class BriefDelivery { kStdin, kArg, kLargeArgs };
// How a rendered brief of `brief_bytes` reaches `p`'s CLI: kStdin, kArg (appended as the
// last argument), or kLargeArgs (p.brief_large_args appended, ${BRIEF_FILE} naming the brief
// file). FailedPrecondition naming the profile when an "arg" brief is too large and the
// profile has no "brief_large".
StatusOr<BriefDelivery> PlanBriefDelivery(const Profile& p, size_t brief_bytes);

ProfileSet LoadProfiles(const std::string& dir);
// Parses one profile file's text (`file` names it in errors); what LoadProfiles does per file.
// Never throws; `bad_field` gets the offending field ("" when the text is not JSON).
StatusOr<Profile> LoadProfileFromJson(std::string_view text, const std::string& file,
                                      std::string* bad_field);
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
