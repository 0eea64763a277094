// Contract: see output_parser.h. Dispatch by parser name plus the helpers the per-CLI
// parsers share (error wording -> FailureKind, HTTP status and retry-after extraction).
#include "exec/output_parser.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <functional>
#include <string>

namespace conclave::exec {
namespace {

using domain::FailureKind;

std::string Lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return r;
}

bool ContainsAny(const std::string& haystack, std::initializer_list<std::string_view> needles) {
  for (auto n : needles) {
    if (haystack.find(n) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

namespace parser_detail {
namespace {

// A small scanner over ASCII-lower-cased text for the status and retry-hint forms below. It
// replaces std::regex, whose matcher recursed once per character of a `\s*` run (a worker
// printing a keyword and megabytes of blanks overflowed the stack) and took minutes on
// megabytes of text. Each form is matched at its leftmost position, as regex_search did.
// Character classes follow ECMAScript in the "C" locale: \s, \d, and \b on [A-Za-z0-9_].
constexpr int64_t kIntMax = std::numeric_limits<int>::max();
constexpr size_t kNo = std::string_view::npos;

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsWord(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

struct Scan {
  std::string_view s;
  size_t Spaces(size_t i) const {
    while (i < s.size() && IsSpace(s[i])) ++i;
    return i;
  }
  size_t Lit(size_t i, std::string_view lit) const {  // kNo unless s[i..] starts with lit
    return i <= s.size() && s.compare(i, lit.size(), lit) == 0 ? i + lit.size() : kNo;
  }
  size_t Opt(size_t i, std::string_view chars) const {  // one optional char from `chars`
    return i < s.size() && chars.find(s[i]) != kNo ? i + 1 : i;
  }
  size_t One(size_t i, std::string_view chars) const {  // one required char from `chars`
    return i != kNo && i < s.size() && chars.find(s[i]) != kNo ? i + 1 : kNo;
  }
  bool WordStart(size_t i) const { return i == 0 || !IsWord(s[i - 1]); }
  bool WordEnd(size_t i) const { return i == s.size() || !IsWord(s[i]); }
  // (\d{3}) at i, optionally followed by \b; the value, or -1.
  int Three(size_t i, bool word_end) const {
    if (i == kNo || i + 3 > s.size()) return -1;
    if (!IsDigit(s[i]) || !IsDigit(s[i + 1]) || !IsDigit(s[i + 2])) return -1;
    if (word_end && !WordEnd(i + 3)) return -1;
    return (s[i] - '0') * 100 + (s[i + 1] - '0') * 10 + (s[i + 2] - '0');
  }
  // (\d+) at i as a number saturating at `cap`, or -1.
  int64_t Digits(size_t i, int64_t cap, size_t* end = nullptr) const {
    if (i == kNo || i >= s.size() || !IsDigit(s[i])) return -1;
    int64_t v = 0;
    for (; i < s.size() && IsDigit(s[i]); ++i) v = std::min(cap, v * 10 + (s[i] - '0'));
    if (end) *end = i;
    return v;
  }
};

// The value of the leftmost match of `form` (which reports -1 where it does not match),
// trying only the occurrences of `anchor` ("" = every position).
template <typename Form>
int64_t Leftmost(const Scan& sc, std::string_view anchor, Form form) {
  for (size_t p = anchor.empty() ? 0 : sc.s.find(anchor); p < sc.s.size();
       p = anchor.empty() ? p + 1 : sc.s.find(anchor, p + 1)) {
    if (int64_t v = form(p); v >= 0) return v;
  }
  return -1;
}

}  // namespace

std::optional<int> FindHttpStatus(std::string_view message) {
  const std::string lower = Lower(message);
  const Scan sc{lower};
  static const std::function<int64_t(const Scan&)> kForms[] = {
      // api error:?\s*(?:request rejected\s*)?\(?(\d{3})\b
      [](const Scan& sc) {
        return Leftmost(sc, "api error", [&](size_t p) {
          size_t i = sc.Spaces(sc.Opt(p + 9, ":"));
          if (size_t r = sc.Lit(i, "request rejected"); r != kNo) i = sc.Spaces(r);
          return sc.Three(sc.Opt(i, "("), true);
        });
      },
      // last status:?\s*(\d{3})\b
      [](const Scan& sc) {
        return Leftmost(sc, "last status",
                        [&](size_t p) { return sc.Three(sc.Spaces(sc.Opt(p + 11, ":")), true); });
      },
      // unexpected status\s*(\d{3})\b
      [](const Scan& sc) {
        return Leftmost(sc, "unexpected status",
                        [&](size_t p) { return sc.Three(sc.Spaces(p + 17), true); });
      },
      // "?(?:statusCode|status|code)"?\s*[:=]\s*(\d{3})\b
      [](const Scan& sc) {
        return Leftmost(sc, "", [&](size_t p) {
          for (std::string_view kw : {"statuscode", "status", "code"}) {
            size_t i = sc.Lit(p, kw);
            if (i == kNo) continue;
            i = sc.One(sc.Spaces(sc.Opt(i, "\"")), ":=");
            if (int v = i == kNo ? -1 : sc.Three(sc.Spaces(i), true); v >= 0) return v;
          }
          return -1;
        });
      },
      // \bstatus\s+(\d{3})\b
      [](const Scan& sc) {
        return Leftmost(sc, "status", [&](size_t p) {
          size_t i = p + 6;
          if (!sc.WordStart(p) || i >= sc.s.size() || !IsSpace(sc.s[i])) return -1;
          return sc.Three(sc.Spaces(i), true);
        });
      },
      // \b(\d{3})\s+(?:Unauthorized|Forbidden|Too Many Requests|...)\b
      [](const Scan& sc) {
        return Leftmost(sc, "", [&](size_t p) {
          int v = sc.WordStart(p) ? sc.Three(p, false) : -1;
          if (v < 0 || p + 3 >= sc.s.size() || !IsSpace(sc.s[p + 3])) return -1;
          size_t i = sc.Spaces(p + 3);
          for (std::string_view phrase :
               {"unauthorized", "forbidden", "too many requests", "internal server error",
                "bad gateway", "service unavailable", "gateway timeout"}) {
            if (size_t e = sc.Lit(i, phrase); e != kNo && sc.WordEnd(e)) return v;
          }
          return -1;
        });
      },
      // \((\d{3})\)
      [](const Scan& sc) {
        return Leftmost(sc, "(", [&](size_t p) {
          int v = sc.Three(p + 1, false);
          return v >= 0 && sc.One(p + 4, ")") != kNo ? v : -1;
        });
      },
  };
  for (const auto& form : kForms) {
    int64_t v = form(sc);
    if (v >= 400 && v <= 599) return static_cast<int>(v);
  }
  return std::nullopt;
}

std::optional<int> FindRetryAfter(std::string_view text) {
  const std::string lower = Lower(text);
  const Scan sc{lower};
  // retry[-_ ]after"?\s*[:=]?\s*"?(\d+)
  int64_t v = Leftmost(sc, "retry", [&](size_t p) {
    size_t i = sc.Lit(sc.One(p + 5, "-_ "), "after");
    if (i == kNo) return int64_t{-1};
    i = sc.Opt(sc.Spaces(sc.Opt(sc.Spaces(sc.Opt(i, "\"")), ":=")), "\"");
    return sc.Digits(i, kIntMax);
  });
  if (v >= 0) return static_cast<int>(v);
  // retry[-_ ]?delay[-_ ]?ms"?\s*[:=]\s*(\d+)   (milliseconds, rounded up)
  v = Leftmost(sc, "retry", [&](size_t p) {
    size_t i = sc.Lit(sc.Opt(sc.Lit(sc.Opt(p + 5, "-_ "), "delay"), "-_ "), "ms");
    if (i == kNo) return int64_t{-1};
    i = sc.One(sc.Spaces(sc.Opt(i, "\"")), ":=");
    return i == kNo ? -1 : sc.Digits(sc.Spaces(i), kIntMax * 1000);
  });
  if (v >= 0) return static_cast<int>((v + 999) / 1000);
  // retry(?:ing)? in\s+(\d+)\s*s
  v = Leftmost(sc, "retry", [&](size_t p) {
    size_t i = p + 5;
    if (size_t g = sc.Lit(i, "ing"); g != kNo) i = g;
    i = sc.Lit(i, " in");
    if (i == kNo || i >= sc.s.size() || !IsSpace(sc.s[i])) return int64_t{-1};
    size_t end = kNo;
    int64_t n = sc.Digits(sc.Spaces(i), kIntMax, &end);
    return n >= 0 && sc.One(sc.Spaces(end), "s") != kNo ? n : -1;
  });
  if (v >= 0) return static_cast<int>(v);
  return std::nullopt;
}

FailureKind ClassifyError(std::string_view message, std::optional<int> http_status) {
  if (!http_status) http_status = FindHttpStatus(message);
  if (http_status) {
    int st = *http_status;
    if (st == 401 || st == 403) return FailureKind::kAuthError;
    if (st == 429) return FailureKind::kRateLimited;
    if (st >= 500 && st <= 599) return FailureKind::kProviderUnavailable;
  }
  const std::string m = Lower(message);
  if (ContainsAny(
          m, {"invalid api key", "incorrect api key", "invalid x-api-key", "api key not valid",
              "authentication_error", "authentication failed", "unauthorized", "unauthenticated",
              "permission_denied", "invalid_api_key", "please run /login", "not logged in"})) {
    return FailureKind::kAuthError;
  }
  if (ContainsAny(m, {"rate limit", "rate_limit", "too many requests", "resource_exhausted",
                      "quota exceeded", "exceeded your current quota", "usage limit"})) {
    return FailureKind::kRateLimited;
  }
  if (ContainsAny(m, {"overloaded", "internal server error", "service unavailable", "bad gateway",
                      "gateway timeout", "high demand", "server_error", "server-side issue"})) {
    return FailureKind::kProviderUnavailable;
  }
  if (ContainsAny(
          m, {"connection refused", "connectionrefused", "econnrefused", "unable to connect",
              "fetch failed", "connection error", "connection failed", "error sending request",
              "econnreset", "socket hang up", "enotfound", "eai_again", "network is unreachable",
              "etimedout", "stream disconnected", "waiting for network"})) {
    return FailureKind::kTransportError;
  }
  return FailureKind::kNone;
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

std::vector<nlohmann::json> JsonLines(std::string_view text) {
  std::vector<nlohmann::json> out;
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

std::optional<nlohmann::json> TrailingJsonObject(std::string_view text) {
  size_t pos = text.size();
  while (pos != std::string_view::npos && pos > 0) {
    size_t found = text.rfind('{', pos - 1);
    if (found == std::string_view::npos) break;
    if (found == 0 || text[found - 1] == '\n') {
      auto j = ParseJson(text.substr(found));
      if (!j.is_discarded() && j.is_object()) return j;
    }
    pos = found;
  }
  return std::nullopt;
}

std::string Clip(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

void ClassifyUnstructuredFailure(ParsedOutput& out, std::string_view stdout_text,
                                 std::string_view stderr_tail, int exit_code) {
  std::string line = LastNonEmptyLine(stderr_tail);
  if (line.empty()) line = LastNonEmptyLine(stdout_text);
  // Look at the whole tail for wording, report the last line as evidence.
  std::string all = std::string(stderr_tail) + "\n" + std::string(stdout_text);
  FailureKind k = ClassifyError(all, std::nullopt);
  const std::string exit_part = "exit=" + std::to_string(exit_code);
  if (k != FailureKind::kNone) {
    out.failure = k;
    out.evidence = exit_part + " " + Clip(line);
    if (k == FailureKind::kRateLimited) out.retry_after_s = FindRetryAfter(all);
    return;
  }
  out.failure = exit_code != 0 ? FailureKind::kNonZeroExit : FailureKind::kContractViolation;
  out.evidence = exit_part + (line.empty() ? " (no output)" : " " + Clip(line));
}

int64_t JsonInt(const nlohmann::json& obj, const char* key) {
  constexpr int64_t kMaxCount = int64_t{1} << 40;
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return 0;
  if (it->is_number_unsigned()) return std::min<uint64_t>(it->get<uint64_t>(), kMaxCount);
  if (it->is_number_integer()) return std::clamp<int64_t>(it->get<int64_t>(), 0, kMaxCount);
  const double d = it->get<double>();  // NaN cannot come from JSON text
  return d <= 0 ? 0 : d >= static_cast<double>(kMaxCount) ? kMaxCount : static_cast<int64_t>(d);
}

std::string JsonStr(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

bool JsonBool(const nlohmann::json& obj, const char* key, bool fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

nlohmann::json ParseJson(std::string_view text) {
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
      if (++depth > kMaxJsonDepth) return nlohmann::json(nlohmann::json::value_t::discarded);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace parser_detail

bool IsKnownParser(std::string_view name) {
  return name == "text" || name == "claude-json" || name == "codex-jsonl" || name == "qwen-json" ||
         name == "opencode-jsonl" || name == "gemini-json";
}

ParsedOutput ParseCliOutput(std::string_view parser, std::string_view stdout_text,
                            std::string_view stderr_tail, int exit_code) {
  if (parser == "text") return ParseTextOutput(stdout_text, stderr_tail, exit_code);
  if (parser == "claude-json") return ParseClaudeOutput(stdout_text, stderr_tail, exit_code);
  if (parser == "codex-jsonl") return ParseCodexOutput(stdout_text, stderr_tail, exit_code);
  if (parser == "qwen-json") return ParseQwenOutput(stdout_text, stderr_tail, exit_code);
  if (parser == "opencode-jsonl") return ParseOpencodeOutput(stdout_text, stderr_tail, exit_code);
  if (parser == "gemini-json") return ParseGeminiOutput(stdout_text, stderr_tail, exit_code);
  ParsedOutput out;
  out.malformed = true;
  out.failure = domain::FailureKind::kContractViolation;
  out.evidence = "unknown parser '" + std::string(parser) + "'";
  out.result_text = std::string(stdout_text);
  return out;
}

}  // namespace conclave::exec
