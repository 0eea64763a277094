// Contract: see findings.h. Validation is hand-written (no schema library) so each error
// names the exact field and item index a reviewer got wrong.
#include "domain/findings.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <set>

namespace conclave::domain {
namespace {

using nlohmann::json;


bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

FindingsParse Fail(std::string error) { return {false, std::move(error), {}}; }

std::string Where(size_t index, std::string_view field) {
  return "findings[" + std::to_string(index) + "]." + std::string(field);
}

// Reads location: {"path": "...", "line": N} or "path:line" or "path". Empty on success.
std::string ReadLocation(const json& loc, size_t index, Finding& out) {
  if (loc.is_null()) return "";
  if (loc.is_string()) {
    std::string s = loc.get<std::string>();
    const size_t colon = s.rfind(':');
    if (colon != std::string::npos && colon + 1 < s.size() &&
        std::all_of(s.begin() + colon + 1, s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      // At most 9 digits (fits an int); from_chars, not std::stoi: nothing here may throw.
      const char* digits = s.data() + colon + 1;
      std::from_chars(digits, digits + std::min<size_t>(9, s.size() - colon - 1), out.line);
      s.resize(colon);
    }
    out.path = s;
    return "";
  }
  if (!loc.is_object()) return Where(index, "location") + ": expected an object {path, line}";
  if (auto it = loc.find("path"); it != loc.end() && !it->is_null()) {
    if (!it->is_string()) return Where(index, "location.path") + ": expected a string";
    out.path = it->get<std::string>();
  }
  if (auto it = loc.find("line"); it != loc.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > 1 << 30) {
      return Where(index, "location.line") + ": expected a non-negative integer";
    }
    out.line = it->get<int>();
  }
  return "";
}

// Reads one item; returns an error text, empty on success.
std::string ReadFinding(const json& item, size_t index, Finding& out) {
  if (!item.is_object()) return "findings[" + std::to_string(index) + "]: expected an object";
  const auto required_string = [&](std::string_view key, std::string& dst) -> std::string {
    auto it = item.find(key);
    if (it == item.end() || it->is_null()) return Where(index, key) + ": missing";
    if (!it->is_string()) return Where(index, key) + ": expected a string";
    dst = it->get<std::string>();
    if (dst.empty()) return Where(index, key) + ": empty";
    return "";
  };
  if (auto it = item.find("id"); it != item.end() && it->is_number_integer()) {
    out.id = std::to_string(it->get<long long>());
  } else if (auto e = required_string("id", out.id); !e.empty()) {
    return e;
  }
  std::string text;
  if (auto e = required_string("severity", text); !e.empty()) return e;
  auto severity = ParseSeverity(text);
  if (!severity) {
    return Where(index, "severity") + ": expected one of " +
           JoinNames(kSeverityNames, std::size(kSeverityNames)) + ", got \"" + text + "\"";
  }
  out.severity = *severity;
  if (auto e = required_string("category", text); !e.empty()) return e;
  std::transform(text.begin(), text.end(), text.begin(),
                 [](char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; });
  if (!IsValidCategory(text)) {
    return Where(index, "category") + ": expected one of " +
           JoinNames(kFindingCategories, std::size(kFindingCategories)) + ", got \"" + text + "\"";
  }
  out.category = text;
  if (auto e = required_string("title", out.title); !e.empty()) return e;
  if (auto it = item.find("location"); it != item.end()) {
    if (auto e = ReadLocation(*it, index, out); !e.empty()) return e;
  }
  if (auto it = item.find("detail"); it != item.end() && !it->is_null()) {
    if (!it->is_string()) return Where(index, "detail") + ": expected a string";
    out.detail = it->get<std::string>();
  }
  if (auto it = item.find("stance"); it != item.end() && !it->is_null()) {
    auto stance = it->is_string() ? ParseStance(it->get<std::string>()) : std::nullopt;
    if (!stance) {
      return Where(index, "stance") + ": expected one of " +
             JoinNames(kStanceNames, std::size(kStanceNames));
    }
    out.stance = *stance;
  }
  if (auto it = item.find("refs"); it != item.end() && !it->is_null()) {
    if (!it->is_array()) return Where(index, "refs") + ": expected an array of strings";
    for (const json& ref : *it) {
      if (!ref.is_string()) return Where(index, "refs") + ": expected an array of strings";
      out.refs.push_back(ref.get<std::string>());
    }
  }
  return "";
}

bool IsFenceLine(std::string_view line, std::string_view* info) {
  size_t indent = 0;
  while (indent < line.size() && indent < 3 && line[indent] == ' ') ++indent;
  if (line.substr(indent, 3) != "```") return false;
  std::string_view rest = line.substr(indent + 3);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r' || rest.back() == '\t')) {
    rest.remove_suffix(1);
  }
  *info = rest;
  return true;
}

// Bodies of fenced blocks tagged json (or untagged), in order of appearance.
std::vector<std::string_view> JsonFences(std::string_view text) {
  std::vector<std::string_view> bodies;
  size_t pos = 0;
  bool inside = false;
  bool wanted = false;
  size_t body_start = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    std::string_view info;
    if (IsFenceLine(line, &info)) {
      if (!inside) {
        inside = true;
        wanted = info.empty() || EqualsIgnoreCase(info, "json");
        body_start = end + 1;
      } else if (info.empty()) {
        if (wanted) bodies.push_back(text.substr(body_start, pos - body_start));
        inside = false;
      }
    }
    pos = end + 1;
  }
  if (inside && wanted && body_start < text.size()) bodies.push_back(text.substr(body_start));
  return bodies;
}

}  // namespace

std::string_view SeverityName(Severity severity) {
  return kSeverityNames[static_cast<size_t>(severity)];
}

std::optional<Severity> ParseSeverity(std::string_view name) {
  for (size_t i = 0; i < std::size(kSeverityNames); ++i) {
    if (EqualsIgnoreCase(name, kSeverityNames[i])) return static_cast<Severity>(i);
  }
  return std::nullopt;
}

Severity Stricter(Severity a, Severity b) { return a < b ? a : b; }

std::string_view StanceName(Stance stance) { return kStanceNames[static_cast<size_t>(stance)]; }

std::optional<Stance> ParseStance(std::string_view name) {
  for (size_t i = 0; i < std::size(kStanceNames); ++i) {
    if (EqualsIgnoreCase(name, kStanceNames[i])) return static_cast<Stance>(i);
  }
  return std::nullopt;
}

std::string JoinNames(const std::string_view* names, size_t count, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < count; ++i) {
    if (i) out += sep;
    out += names[i];
  }
  return out;
}

bool IsValidCategory(std::string_view category) {
  return std::find(std::begin(kFindingCategories), std::end(kFindingCategories), category) !=
         std::end(kFindingCategories);
}

FindingsParse ParseFindingsJson(const json& doc) {
  if (!doc.is_object()) return Fail("expected a JSON object with a \"findings\" array");
  auto it = doc.find("findings");
  if (it == doc.end()) return Fail("findings: missing");
  if (!it->is_array()) return Fail("findings: expected an array");
  FindingsParse result{true, "", {}};
  std::set<std::string> seen;
  for (size_t i = 0; i < it->size(); ++i) {
    Finding finding;
    if (auto error = ReadFinding((*it)[i], i, finding); !error.empty()) return Fail(error);
    if (!seen.insert(finding.id).second) {
      return Fail(Where(i, "id") + ": duplicate id \"" + finding.id + "\"");
    }
    result.findings.push_back(std::move(finding));
  }
  return result;
}

FindingsParse ExtractFindings(std::string_view text) {
  std::vector<std::string_view> fences = JsonFences(text);
  for (auto body = fences.rbegin(); body != fences.rend(); ++body) {
    if (body->find("\"findings\"") == std::string_view::npos) continue;
    json doc = json::parse(body->begin(), body->end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return Fail("fenced json block with \"findings\" is not valid JSON");
    return ParseFindingsJson(doc);
  }
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return Fail("text looks like a JSON object but is not valid JSON");
    return ParseFindingsJson(doc);
  }
  return Fail("no ```json block with \"findings\" and the text is not a JSON object");
}

json FindingToJson(const Finding& finding) {
  return json{{"id", finding.id},
              {"severity", SeverityName(finding.severity)},
              {"category", finding.category},
              {"location", {{"path", finding.path}, {"line", finding.line}}},
              {"title", finding.title},
              {"detail", finding.detail},
              {"stance", StanceName(finding.stance)},
              {"refs", finding.refs}};
}

}  // namespace conclave::domain
