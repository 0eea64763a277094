// Contract: see parser_support.h ("classification"). Error wording -> FailureKind, HTTP
// status and retry-after extraction with bounds, and the unstructured fallback scan, which
// reads only what a CLI printed outside its events (stderr, non-JSON stdout lines).
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <functional>
#include <string>

#include "exec/parser_support.h"

namespace conclave::exec::parser_detail {
namespace {

using domain::FailureKind;

// The status/retry scanners and the wording checks only ever see this much of a message or
// line (the scanners are linear, so this bounds work, not stack depth).
constexpr size_t kMaxScan = 4096;
// How many lines from the end of stderr / of the non-JSON stdout the fallback reads.
constexpr size_t kStderrLines = 20;
constexpr size_t kStdoutLines = 10;

std::string Lower(std::string_view s) {
  std::string r(s.substr(0, kMaxScan));
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

std::string_view Trim(std::string_view s) {
  size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return {};
  size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

// Non-blank lines of `text`, last first, at most `max`, each trimmed.
std::vector<std::string_view> LastLines(std::string_view text, size_t max,
                                        bool skip_json_events) {
  std::vector<std::string_view> out;
  size_t end = text.size();
  while (end > 0 && out.size() < max) {
    size_t nl = text.rfind('\n', end - 1);
    size_t start = nl == std::string_view::npos ? 0 : nl + 1;
    std::string_view line = Trim(text.substr(start, end - start));
    bool event = !line.empty() && (line.front() == '{' || line.front() == '[');
    if (!line.empty() && !(skip_json_events && event)) out.push_back(line);
    if (nl == std::string_view::npos) break;
    end = nl;
  }
  return out;
}

// A small scanner over ASCII-lower-cased text for the status and retry-hint forms below. It
// replaces std::regex, whose matcher recursed once per character of a `\s*` run (a worker
// printing a keyword and megabytes of blanks overflowed the stack) and took minutes on
// megabytes of text. Each form is matched at its leftmost position, as regex_search did, on
// the first kMaxScan bytes (Lower clips).
// Character classes follow ECMAScript in the "C" locale: \s, \d, and \b on [A-Za-z0-9_].
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
  // Numbers saturate at the cap while they are read: no overflow however many digits.
  constexpr int64_t kCapS = kMaxRetryAfterS;
  // retry[-_ ]after"?\s*[:=]?\s*"?(\d+)
  int64_t v = Leftmost(sc, "retry", [&](size_t p) {
    size_t i = sc.Lit(sc.One(p + 5, "-_ "), "after");
    if (i == kNo) return int64_t{-1};
    i = sc.Opt(sc.Spaces(sc.Opt(sc.Spaces(sc.Opt(i, "\"")), ":=")), "\"");
    return sc.Digits(i, kCapS);
  });
  if (v >= 0) return static_cast<int>(v);
  // retry[-_ ]?delay[-_ ]?ms"?\s*[:=]\s*(\d+)   (milliseconds, rounded up)
  v = Leftmost(sc, "retry", [&](size_t p) {
    size_t i = sc.Lit(sc.Opt(sc.Lit(sc.Opt(p + 5, "-_ "), "delay"), "-_ "), "ms");
    if (i == kNo) return int64_t{-1};
    i = sc.One(sc.Spaces(sc.Opt(i, "\"")), ":=");
    return i == kNo ? -1 : sc.Digits(sc.Spaces(i), kCapS * 1000);
  });
  if (v >= 0) return static_cast<int>((v + 999) / 1000);
  // retry(?:ing)? in\s+(\d+)\s*s
  v = Leftmost(sc, "retry", [&](size_t p) {
    size_t i = p + 5;
    if (size_t g = sc.Lit(i, "ing"); g != kNo) i = g;
    i = sc.Lit(i, " in");
    if (i == kNo || i >= sc.s.size() || !IsSpace(sc.s[i])) return int64_t{-1};
    size_t end = kNo;
    int64_t n = sc.Digits(sc.Spaces(i), kCapS, &end);
    return n >= 0 && sc.One(sc.Spaces(end), "s") != kNo ? n : -1;
  });
  if (v >= 0) return static_cast<int>(v);
  return std::nullopt;
}

FailureKind ClassifyStatus(int st) {
  if (st == 401 || st == 403) return FailureKind::kAuthError;
  if (st == 429) return FailureKind::kRateLimited;
  if (st >= 500 && st <= 599) return FailureKind::kProviderUnavailable;
  return FailureKind::kNone;
}

FailureKind ClassifyError(std::string_view message, std::optional<int> http_status) {
  if (!http_status) http_status = FindHttpStatus(message);
  if (http_status) {
    FailureKind k = ClassifyStatus(*http_status);
    if (k != FailureKind::kNone) return k;
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
              "could not connect", "fetch failed", "connection error", "connection failed",
              "error sending request", "econnreset", "socket hang up", "enotfound", "eai_again",
              "network is unreachable", "etimedout", "stream disconnected",
              "waiting for network"})) {
    return FailureKind::kTransportError;
  }
  return FailureKind::kNone;
}

void SetStructuredFailure(ParsedOutput& out, FailureKind kind, std::string what,
                          std::string_view hint_text) {
  out.failure = kind;
  out.rule = "structured";
  out.evidence = "[structured] " + std::move(what);
  if (kind == FailureKind::kRateLimited && !hint_text.empty()) {
    out.retry_after_s = FindRetryAfter(hint_text);
  }
}

std::vector<std::string_view> UnstructuredStdoutTail(std::string_view stdout_text,
                                                     size_t max_lines) {
  return LastLines(stdout_text, max_lines, /*skip_json_events=*/true);
}

void ClassifyUnstructuredFailure(ParsedOutput& out, std::string_view stdout_text,
                                 std::string_view stderr_tail, int exit_code) {
  const std::string exit_part = "exit=" + std::to_string(exit_code);
  auto try_lines = [&](const std::vector<std::string_view>& lines, const char* rule) {
    for (std::string_view line : lines) {
      FailureKind k = ClassifyError(line, std::nullopt);
      if (k == FailureKind::kNone) continue;
      out.failure = k;
      out.rule = rule;
      out.evidence = "[" + std::string(rule) + "] " + exit_part + " " + Clip(line);
      if (k == FailureKind::kRateLimited) {
        out.retry_after_s = FindRetryAfter(line);
        if (!out.retry_after_s) out.retry_after_s = FindRetryAfter(stderr_tail.substr(
            stderr_tail.size() > kMaxScan ? stderr_tail.size() - kMaxScan : 0));
      }
      return true;
    }
    return false;
  };
  auto err_lines = LastLines(stderr_tail, kStderrLines, /*skip_json_events=*/false);
  auto out_lines = UnstructuredStdoutTail(stdout_text, kStdoutLines);
  if (try_lines(err_lines, "stderr") || try_lines(out_lines, "stdout-tail")) return;
  std::string_view last = !err_lines.empty() ? err_lines.front()
                          : !out_lines.empty() ? out_lines.front()
                                               : std::string_view();
  out.failure = exit_code != 0 ? FailureKind::kNonZeroExit : FailureKind::kContractViolation;
  out.rule = "exit-status";
  out.evidence = "[exit-status] " + exit_part + (last.empty() ? " (no output)" : " " + Clip(last));
}

}  // namespace conclave::exec::parser_detail
