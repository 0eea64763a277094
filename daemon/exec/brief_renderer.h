// Brief rendering: the same brief rendered through a per-profile template from
// profiles/templates/<name>.tmpl.
// A writer's brief is structured text (ROLE / SCOPE / MODE / REVIEW_MODE / TASK / DONE / OUTPUT
// sections, or free text) split by ParseBriefSections. A reviewer's brief is structured parts
// (domain/review_brief.h) and is never parsed for sections: the parts are placed directly, so
// an artifact line that looks like a heading cannot split or overwrite anything.
// Placeholders: {{title}} {{brief}} {{role}} {{hypothesis}} {{scope}} {{validation}}
// {{task_id}} {{attempt}} {{extra}} {{contract}} {{answer_format}}, {{section:NAME}}, and the
// blocks {{#writer}}...{{/writer}} / {{#reviewer}}...{{/reviewer}} (kept only for that kind of
// brief). Expansion is one pass: text put in by a placeholder is never expanded again.
// For a reviewer: {{section:ROLE}} = the role, {{section:TASK}} = header, instructions, carried
// findings, earlier rounds, workspace and the fenced artifact, {{section:OUTPUT}} /
// {{contract}} / {{answer_format}} = the answer format (at the first of them only), the writer
// placeholders are empty; a template that places no answer format gets it appended. Without
// a template a writer's brief is followed by the extra text and the worker-contract
// instructions, a reviewer's brief is its parts in order.
// Thread-safety: pure functions apart from reading the template file.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "domain/review_brief.h"

namespace conclave::exec {

struct BriefInput {
  int64_t task_id = 0;
  int attempt = 1;
  std::string title, brief, role, hypothesis, scope, validation, extra;
  // Opens the brief (and a template's TASK section) when this attempt resumes one that ended
  // early (domain/resume_brief); "" otherwise.
  std::string resume;
  bool require_contract = true;
  std::optional<domain::ReviewBriefParts> review;  // set: a reviewer round
};

// The worker-contract instructions appended to every brief that expects one.
extern const char* const kContractInstructions;

// Splits a structured brief into its upper-case sections (text before the first heading goes
// under "TASK" when there is no TASK section).
std::map<std::string, std::string> ParseBriefSections(const std::string& brief);

std::string RenderBrief(const std::string& profiles_dir, const std::string& template_name,
                        const BriefInput& in);
// The same with the template's text already read (nullopt: no template, or none readable).
std::string RenderBriefWith(const std::optional<std::string>& template_text, const BriefInput& in);
// PROFILES_DIR/templates/<name>.tmpl, nullopt when the name is empty or the file unreadable.
std::optional<std::string> ReadBriefTemplate(const std::string& profiles_dir,
                                             const std::string& template_name);

// Renders a template text (exposed for tests).
std::string RenderTemplate(const std::string& tmpl, const BriefInput& in);

}  // namespace conclave::exec
