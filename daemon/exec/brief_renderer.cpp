#include "exec/brief_renderer.h"

#include <fstream>
#include <sstream>

namespace conclave::exec {

const char* const kContractInstructions =
    "When you finish, end your answer with these five sections, each heading on its own line:\n"
    "SUMMARY: one paragraph; start it with PASS, FAIL or BLOCKED.\n"
    "EVIDENCE: commands you ran and what they showed.\n"
    "CHANGES: one line per file you changed, as `- path/relative/to/worktree: what changed`, or "
    "`none`.\n"
    "RISKS: what could still be wrong.\n"
    "BLOCKERS: what stops you, or `none`.\n";

namespace {
const char* kSections[] = {"ROLE", "SCOPE", "MODE", "REVIEW_MODE", "TASK", "DONE", "OUTPUT"};

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// "ROLE: x" or "ROLE" alone or "## ROLE" → "ROLE" and the rest of the line.
bool HeadingOf(const std::string& line, std::string* name, std::string* rest) {
  std::string l = line;
  while (!l.empty() && (l[0] == '#' || l[0] == ' ' || l[0] == '*')) l.erase(0, 1);
  for (const char* s : kSections) {
    std::string n = s;
    if (l.rfind(n, 0) != 0) continue;
    std::string after = l.substr(n.size());
    while (!after.empty() && after[0] == '*') after.erase(0, 1);
    if (after.empty() || after[0] == ':') {
      *name = n;
      *rest = after.empty() ? "" : Trim(after.substr(1));
      return true;
    }
  }
  return false;
}

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
}
}  // namespace

std::map<std::string, std::string> ParseBriefSections(const std::string& brief) {
  std::map<std::string, std::string> out;
  std::istringstream in(brief);
  std::string line, current, preamble;
  while (std::getline(in, line)) {
    std::string name, rest;
    if (HeadingOf(line, &name, &rest)) {
      current = name;
      out[current] = rest;
      continue;
    }
    if (current.empty()) {
      preamble += line + "\n";
    } else {
      out[current] += (out[current].empty() ? "" : "\n") + line;
    }
  }
  for (auto& [k, v] : out) v = Trim(v);
  if (!out.count("TASK") && !Trim(preamble).empty()) out["TASK"] = Trim(preamble);
  return out;
}

std::string RenderTemplate(const std::string& tmpl, const BriefInput& in) {
  std::string s = tmpl;
  auto sections = ParseBriefSections(in.brief);
  for (const char* name : kSections) {
    auto it = sections.find(name);
    ReplaceAll(s, std::string("{{section:") + name + "}}", it == sections.end() ? "" : it->second);
  }
  ReplaceAll(s, "{{contract}}", in.require_contract ? kContractInstructions : "");
  ReplaceAll(s, "{{title}}", in.title);
  ReplaceAll(s, "{{role}}", in.role);
  ReplaceAll(s, "{{hypothesis}}", in.hypothesis);
  ReplaceAll(s, "{{scope}}", in.scope);
  ReplaceAll(s, "{{validation}}", in.validation);
  ReplaceAll(s, "{{task_id}}", std::to_string(in.task_id));
  ReplaceAll(s, "{{attempt}}", std::to_string(in.attempt));
  ReplaceAll(s, "{{extra}}", in.extra);
  ReplaceAll(s, "{{brief}}", in.brief);  // last: the brief may itself contain braces
  return s;
}

std::string RenderBrief(const std::string& profiles_dir, const std::string& template_name,
                        const BriefInput& in) {
  if (!template_name.empty()) {
    std::ifstream f(profiles_dir + "/templates/" + template_name + ".tmpl");
    if (f) {
      std::stringstream ss;
      ss << f.rdbuf();
      return RenderTemplate(ss.str(), in);
    }
  }
  std::string out = in.brief;
  if (!out.empty() && out.back() != '\n') out += '\n';
  if (!in.hypothesis.empty()) out += "\nHYPOTHESIS: " + in.hypothesis + "\n";
  if (!in.extra.empty()) out += "\n" + in.extra + (in.extra.back() == '\n' ? "" : "\n");
  if (in.require_contract) out += std::string("\n") + kContractInstructions;
  return out;
}

}  // namespace conclave::exec
