// Contract: see parser_support.h — bounded numbers, exception-free JSON access and the text
// helpers of the output parsers.
#include "exec/parser_support.h"

#include <cmath>
#include <limits>

namespace conclave::exec::parser_detail {

using nlohmann::json;

std::optional<int64_t> ParseDecimal(std::string_view digits) {
  if (digits.empty()) return std::nullopt;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    int d = c - '0';
    if (v > (kMax - d) / 10) {
      v = kMax;  // saturate; keep validating the rest
      continue;
    }
    v = v * 10 + d;
  }
  return v;
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (a < 0) a = 0;
  if (b < 0) b = 0;
  return a > kMax - b ? kMax : a + b;
}

const json& JsonField(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::string JsonStr(const json& obj, const char* key) {
  const json& v = JsonField(obj, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

bool JsonBool(const json& obj, const char* key, bool fallback) {
  const json& v = JsonField(obj, key);
  return v.is_boolean() ? v.get<bool>() : fallback;
}

int64_t JsonInt(const json& obj, const char* key) {
  const json& v = JsonField(obj, key);
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    return u > static_cast<uint64_t>(kMaxTokenCount) ? kMaxTokenCount : static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    return i < 0 ? 0 : (i > kMaxTokenCount ? kMaxTokenCount : i);
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (!std::isfinite(d) || d <= 0) return 0;
    return d >= static_cast<double>(kMaxTokenCount) ? kMaxTokenCount : static_cast<int64_t>(d);
  }
  return 0;
}

std::optional<double> JsonNonNegative(const json& obj, const char* key) {
  const json& v = JsonField(obj, key);
  if (!v.is_number()) return std::nullopt;
  double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) return std::nullopt;
  return d;
}

std::optional<int> JsonHttpStatus(const json& obj, const char* key) {
  const json& v = JsonField(obj, key);
  std::optional<int64_t> n;
  if (v.is_number_integer() || v.is_number_unsigned()) {
    if (v.is_number_unsigned()) {
      uint64_t u = v.get<uint64_t>();
      if (u <= 999) n = static_cast<int64_t>(u);
    } else {
      n = v.get<int64_t>();
    }
  } else if (v.is_string()) {
    n = ParseDecimal(v.get<std::string>());
  }
  if (!n || *n < 100 || *n > 599) return std::nullopt;
  return static_cast<int>(*n);
}

json ParseJson(std::string_view text) {
  // A linear pre-scan of the nesting depth (brackets inside strings do not count); the
  // parser itself is iterative, but copying or dumping the result would recurse per level.
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return json(json::value_t::discarded);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return json::parse(text, nullptr, /*allow_exceptions=*/false);
}

std::vector<json> JsonLines(std::string_view text) {
  std::vector<json> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    size_t a = line.find_first_not_of(" \t\r");
    if (a == std::string_view::npos || line[a] != '{') continue;
    auto j = ParseJson(line.substr(a));
    if (!j.is_discarded() && j.is_object()) out.push_back(std::move(j));
  }
  return out;
}

std::optional<json> TrailingJsonObject(std::string_view text) {
  // Only the last 1 MiB: a trailing object is small, and each try parses to the end.
  constexpr size_t kWindow = 1 << 20;
  if (text.size() > kWindow) text = text.substr(text.size() - kWindow);
  size_t pos = text.size();
  int tries = 0;
  while (pos > 0 && tries < 64) {
    size_t found = text.rfind('{', pos - 1);
    if (found == std::string_view::npos) break;
    if (found == 0 || text[found - 1] == '\n') {
      ++tries;
      auto j = ParseJson(text.substr(found));
      if (!j.is_discarded() && j.is_object()) return j;
    }
    pos = found;
  }
  return std::nullopt;
}

std::string LastNonEmptyLine(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    size_t start = text.rfind('\n', end - 1);
    start = (start == std::string_view::npos) ? 0 : start + 1;
    std::string_view line = text.substr(start, end - start);
    size_t a = line.find_first_not_of(" \t\r");
    if (a != std::string_view::npos) {
      size_t b = line.find_last_not_of(" \t\r");
      return std::string(line.substr(a, b - a + 1));
    }
    if (start == 0) break;
    end = start - 1;
  }
  return {};
}

std::string Clip(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

}  // namespace conclave::exec::parser_detail
