// Contract: see worker_contract.h. A line-oriented scanner; ASCII-only case folding so the
// result does not depend on the process locale.
#include "domain/worker_contract.h"

#include <algorithm>
#include <optional>
#include <set>

namespace conclave::domain {
namespace {

constexpr std::string_view kWellKnownFiles[] = {
    "Makefile",    "Dockerfile", "Jenkinsfile", "Gemfile",   "Rakefile", "Procfile",
    "Vagrantfile", "LICENSE",    "README",      "CHANGELOG", "BUILD",    "WORKSPACE"};

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
char Upper(char c) { return (c >= 'a' && c <= 'z') ? char(c - 'a' + 'A') : c; }

std::string_view Trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

bool ConsumePrefix(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

std::string UpperWord(std::string_view s) {
  std::string out;
  for (char c : s) out.push_back(Upper(c));
  return out;
}

// Canonical section name for a heading word ("STATUS" included), or "".
std::string CanonicalSection(std::string_view word) {
  if (word.size() > 16) return "";  // longer than any section name (a long line of letters)
  const std::string w = UpperWord(word);
  for (std::string_view name : kContractSections) {
    if (w == name || w + "S" == name) return std::string(name);
  }
  return w == "STATUS" ? w : "";
}

struct Heading {
  std::string name;
  std::string_view rest;  // text after the heading on the same line
};

std::optional<Heading> MatchHeading(std::string_view line) {
  std::string_view s = Trim(line);
  while (ConsumePrefix(s, "#")) {
  }
  s = Trim(s);
  const bool bold = ConsumePrefix(s, "**") || ConsumePrefix(s, "__");
  // A heading word is at most 16 letters: stop one past that (CanonicalSection refuses it),
  // not at the end of a line that may be megabytes of letters.
  size_t n = 0;
  while (n < s.size() && n <= 16 && IsAlpha(s[n])) ++n;
  Heading heading{CanonicalSection(s.substr(0, n)), {}};
  if (heading.name.empty()) return std::nullopt;
  s.remove_prefix(n);
  bool colon = ConsumePrefix(s, ":");
  if (bold && !ConsumePrefix(s, "**")) ConsumePrefix(s, "__");
  colon = ConsumePrefix(s, ":") || colon;
  heading.rest = Trim(s);
  if (!heading.rest.empty() && !colon) return std::nullopt;
  return heading;
}

// Maps a status word to PASS / FAIL / BLOCKED, or "" when it is none of them.
std::string NormalizeStatus(std::string_view word, bool upper_case_only) {
  std::string_view w = word;
  while (!w.empty() && !IsAlpha(w.front())) w.remove_prefix(1);
  size_t n = 0;
  while (n < w.size() && IsAlpha(w[n])) ++n;
  w = w.substr(0, n);
  if (w.size() > 16) return "";  // longer than any status word
  const std::string up = UpperWord(w);
  if (upper_case_only && up != w) return "";
  if (up == "PASS" || up == "PASSED" || (!upper_case_only && (up == "OK" || up == "SUCCESS"))) {
    return "PASS";
  }
  if (up == "FAIL" || up == "FAILED" || (!upper_case_only && up == "FAILURE")) return "FAIL";
  if (up == "BLOCKED") return "BLOCKED";
  return "";
}

// A path as workers write one. Non-ASCII (UTF-8) names are paths too; a name in backticks may
// hold spaces (`my notes.txt`).
bool LooksLikePath(std::string_view token, bool quoted = false) {
  if (token.empty() || token.front() == '/' || token.front() == '~') return false;
  if (quoted && (token.front() == ' ' || token.back() == ' ')) return false;
  for (char c : token) {
    if (!(IsAlpha(c) || IsDigit(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '+' ||
          c == '@' || static_cast<unsigned char>(c) >= 0x80 || (quoted && c == ' '))) {
      return false;
    }
  }
  const std::string padded = "/" + std::string(token) + "/";
  if (padded.find("/../") != std::string::npos || padded == "/./") return false;
  const bool spaced = token.find(' ') != std::string_view::npos;
  if (!spaced && token.find('/') != std::string_view::npos) return true;
  const size_t dot = token.rfind('.');
  if (dot != std::string_view::npos && dot + 1 < token.size()) {
    std::string_view ext = token.substr(dot + 1);
    // "`run make now`" is prose; "`my notes.txt`" a name: a spaced one needs an extension.
    return std::any_of(ext.begin(), ext.end(), IsAlpha) && ext.find(' ') == std::string_view::npos;
  }
  if (spaced) return false;
  return std::find(std::begin(kWellKnownFiles), std::end(kWellKnownFiles), token) !=
         std::end(kWellKnownFiles);
}

// Strips quotes, emphasis, trailing punctuation, a ":line" suffix and a leading "./".
std::string_view CleanToken(std::string_view t) {
  const std::string_view strip = "`'\"*_";
  while (!t.empty() && strip.find(t.front()) != std::string_view::npos) t.remove_prefix(1);
  while (!t.empty() && (strip.find(t.back()) != std::string_view::npos ||
                        std::string_view(":,;.").find(t.back()) != std::string_view::npos)) {
    t.remove_suffix(1);
  }
  const size_t colon = t.rfind(':');
  if (colon != std::string_view::npos && colon + 1 < t.size() &&
      std::all_of(t.begin() + colon + 1, t.end(), IsDigit)) {
    t = t.substr(0, colon);
  }
  while (ConsumePrefix(t, "./")) {
  }
  return t;
}

std::string_view NextToken(std::string_view& s) {
  s = Trim(s);
  size_t end = 0;
  if (!s.empty() && s.front() == '`') {
    end = s.find('`', 1);
    end = end == std::string_view::npos ? s.size() : end + 1;
  } else {
    while (end < s.size() && s[end] != ' ' && s[end] != '\t') ++end;
  }
  std::string_view token = s.substr(0, end);
  s.remove_prefix(end);
  return token;
}

// Appends the paths named on one CHANGES line.
void CollectPaths(std::string_view line, std::vector<std::string>& out) {
  std::string_view s = Trim(line);
  for (std::string_view bullet : {"- ", "* ", "+ ", "• "}) {
    if (ConsumePrefix(s, bullet)) break;
  }
  size_t digits = 0;
  while (digits < s.size() && IsDigit(s[digits])) ++digits;
  if (digits > 0 && digits + 1 < s.size() && (s[digits] == '.' || s[digits] == ')') &&
      s[digits + 1] == ' ') {
    s.remove_prefix(digits + 2);
  }
  s = Trim(s);
  size_t letters = 0;  // git status: one or two of MADRCU?! then a space
  while (letters < 2 && letters < s.size() &&
         std::string_view("MADRCU?!").find(s[letters]) != std::string_view::npos) {
    ++letters;
  }
  if (letters > 0 && letters < s.size() && (s[letters] == ' ' || s[letters] == '\t')) {
    s.remove_prefix(letters);
  }
  std::string_view rest = s;
  std::string_view token = NextToken(rest);
  std::string_view after = rest;
  const std::string_view arrow = NextToken(after);
  const bool rename = arrow == "->" || arrow == "→" || arrow == "=>";
  if (rename) token = NextToken(after);  // only the new name exists after a rename
  std::vector<std::string_view> candidates = {CleanToken(token)};
  for (size_t open = rename ? std::string_view::npos : line.find('`');
       open != std::string_view::npos;) {
    const size_t close = line.find('`', open + 1);
    if (close == std::string_view::npos) break;
    candidates.push_back(CleanToken(line.substr(open + 1, close - open - 1)));
    open = line.find('`', close + 1);
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    std::string_view candidate = candidates[i];
    if (LooksLikePath(candidate, i > 0) &&
        std::find(out.begin(), out.end(), candidate) == out.end()) {
      out.emplace_back(candidate);
    }
  }
}

bool IsFence(std::string_view line) { return Trim(line).substr(0, 3) == "```"; }

}  // namespace

WorkerContract ParseWorkerContract(std::string_view text) {
  WorkerContract contract;
  std::string current;  // section being filled, "" before the first heading
  std::string status_line;
  bool status_next = false;
  bool in_fence = false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    std::optional<Heading> heading = in_fence ? std::nullopt : MatchHeading(line);
    if (IsFence(line)) in_fence = !in_fence;
    if (status_next && !Trim(line).empty()) {
      status_line = NormalizeStatus(Trim(line), false);
      status_next = false;
      continue;
    }
    if (heading && heading->name == "STATUS") {
      if (heading->rest.empty()) {
        status_next = true;
      } else {
        status_line = NormalizeStatus(heading->rest, false);
      }
      continue;
    }
    if (heading) {
      current = heading->name;
      std::string& body = contract.sections[current];
      if (!body.empty()) body += "\n";
      body += heading->rest;
      continue;
    }
    if (!current.empty()) {
      std::string& body = contract.sections[current];
      body += "\n";
      body += line;
    }
  }
  for (auto& [name, body] : contract.sections) body = std::string(Trim(body));
  for (std::string_view name : kContractSections) {
    if (!contract.sections.count(std::string(name))) contract.missing.emplace_back(name);
  }
  if (auto it = contract.sections.find("CHANGES"); it != contract.sections.end()) {
    std::string_view body = it->second;
    for (size_t p = 0; p <= body.size();) {
      size_t e = body.find('\n', p);
      if (e == std::string_view::npos) e = body.size();
      const std::string_view line = body.substr(p, e - p);
      if (!IsFence(line)) CollectPaths(line, contract.changed_files);
      p = e + 1;
    }
  }
  contract.status = status_line;
  if (contract.status.empty()) {
    if (auto it = contract.sections.find("SUMMARY"); it != contract.sections.end()) {
      contract.status = NormalizeStatus(it->second, true);
    }
  }
  return contract;
}

nlohmann::json ContractToJson(const WorkerContract& contract) {
  return nlohmann::json{{"sections", contract.sections},
                        {"missing", contract.missing},
                        {"changed_files", contract.changed_files},
                        {"status", contract.status},
                        {"ok", contract.ok()}};
}

}  // namespace conclave::domain
