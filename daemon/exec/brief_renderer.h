// Brief rendering: the same structured brief (ROLE / SCOPE / MODE / REVIEW_MODE / TASK / DONE /
// OUTPUT sections, or free text) rendered through a per-profile template from
// profiles/templates/<name>.tmpl. Placeholders: {{title}} {{brief}} {{role}} {{hypothesis}}
// {{scope}} {{validation}} {{task_id}} {{attempt}} {{extra}} {{contract}}, and
// {{section:NAME}} for a section of the structured brief ("" when absent). Without a template
// the brief is followed by the extra text and the worker-contract instructions.
#pragma once

#include <map>
#include <string>

namespace conclave::exec {

struct BriefInput {
  int64_t task_id = 0;
  int attempt = 1;
  std::string title, brief, role, hypothesis, scope, validation, extra;
  bool require_contract = true;
};

// The worker-contract instructions appended to every brief that expects one.
extern const char* const kContractInstructions;

// Splits a structured brief into its upper-case sections (text before the first heading goes
// under "TASK" when there is no TASK section).
std::map<std::string, std::string> ParseBriefSections(const std::string& brief);

std::string RenderBrief(const std::string& profiles_dir, const std::string& template_name,
                        const BriefInput& in);

// Renders a template text (exposed for tests).
std::string RenderTemplate(const std::string& tmpl, const BriefInput& in);

}  // namespace conclave::exec
