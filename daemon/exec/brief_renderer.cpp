// Contract: see brief_renderer.h.
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

// Removes {{#name}}...{{/name}} blocks (keep=false) or just their markers (keep=true).
std::string Blocks(std::string s, const std::string& name, bool keep) {
  const std::string open = "{{#" + name + "}}", close = "{{/" + name + "}}";
  size_t pos = 0;
  while ((pos = s.find(open, pos)) != std::string::npos) {
    size_t end = s.find(close, pos + open.size());
    if (end == std::string::npos) {
      s.erase(pos, open.size());
      continue;
    }
    if (keep) {
      s.erase(end, close.size());
      s.erase(pos, open.size());
    } else {
      s.erase(pos, end + close.size() - pos);
    }
  }
  return s;
}

// The value of each placeholder for this brief.
std::map<std::string, std::string> Values(const BriefInput& in) {
  std::map<std::string, std::string> v;
  v["title"] = in.title;
  v["role"] = in.role;
  v["task_id"] = std::to_string(in.task_id);
  v["attempt"] = std::to_string(in.attempt);
  if (in.review) {
    const auto& p = *in.review;
    v["section:ROLE"] = p.role;
    v["section:TASK"] = domain::BriefTask(p);
    v["section:SCOPE"] = "the artifact in this brief; review only, change no files";
    v["section:MODE"] = "review-only";
    v["section:REVIEW_MODE"] = p.review_mode;
    v["section:DONE"] = "every defect you found is in your answer, in the answer format";
    v["brief"] = domain::RenderPlainBrief(p);
    for (const char* k : {"hypothesis", "scope", "validation", "extra"}) v[k] = "";
    return v;
  }
  auto sections = ParseBriefSections(in.brief);
  for (const char* name : kSections) {
    auto it = sections.find(name);
    v[std::string("section:") + name] = it == sections.end() ? "" : it->second;
  }
  v["contract"] = in.require_contract ? kContractInstructions : "";
  v["answer_format"] = "";
  v["hypothesis"] = in.hypothesis;
  v["scope"] = in.scope;
  v["validation"] = in.validation;
  v["extra"] = in.extra;
  v["brief"] = in.brief;
  if (!in.resume.empty()) {
    v["section:TASK"] = in.resume + "\n" + v["section:TASK"];
    v["brief"] = in.resume + "\n" + in.brief;
  }
  return v;
}

bool IsAnswerFormatSlot(const std::string& name) {
  return name == "answer_format" || name == "contract" || name == "section:OUTPUT";
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
  const bool reviewer = in.review.has_value();
  std::string t = Blocks(Blocks(tmpl, "writer", !reviewer), "reviewer", reviewer);
  const auto values = Values(in);
  std::string out;
  bool answer_placed = false;
  size_t pos = 0;
  while (pos < t.size()) {
    size_t open = t.find("{{", pos);
    size_t close = open == std::string::npos ? open : t.find("}}", open + 2);
    if (close == std::string::npos) {
      out += t.substr(pos);
      break;
    }
    out += t.substr(pos, open - pos);
    const std::string name = t.substr(open + 2, close - open - 2);
    if (reviewer && IsAnswerFormatSlot(name)) {
      if (!answer_placed) out += in.review->answer_format;
      answer_placed = true;
    } else if (auto it = values.find(name); it != values.end()) {
      out += it->second;
    } else {
      out += t.substr(open, close + 2 - open);  // not ours: left as written
    }
    pos = close + 2;
  }
  if (reviewer && !answer_placed) {
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += "\n" + in.review->answer_format;
  }
  return out;
}

std::optional<std::string> ReadBriefTemplate(const std::string& profiles_dir,
                                             const std::string& template_name) {
  if (template_name.empty()) return std::nullopt;
  std::ifstream f(profiles_dir + "/templates/" + template_name + ".tmpl");
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string RenderBrief(const std::string& profiles_dir, const std::string& template_name,
                        const BriefInput& in) {
  return RenderBriefWith(ReadBriefTemplate(profiles_dir, template_name), in);
}

std::string RenderBriefWith(const std::optional<std::string>& template_text, const BriefInput& in) {
  if (template_text) return RenderTemplate(*template_text, in);
  if (in.review) return domain::RenderPlainBrief(*in.review);
  std::string out = in.resume.empty() ? in.brief : in.resume + "\n" + in.brief;
  if (!out.empty() && out.back() != '\n') out += '\n';
  if (!in.hypothesis.empty()) out += "\nHYPOTHESIS: " + in.hypothesis + "\n";
  if (!in.extra.empty()) out += "\n" + in.extra + (in.extra.back() == '\n' ? "" : "\n");
  if (in.require_contract) out += std::string("\n") + kContractInstructions;
  return out;
}

}  // namespace conclave::exec
