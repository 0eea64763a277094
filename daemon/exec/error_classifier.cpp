// Contract: see parser_support.h ("classification"). Error wording -> FailureKind, HTTP
// status and retry-after extraction with bounds, and the unstructured fallback scan, which
// reads only what a CLI printed outside its events (stderr, non-JSON stdout lines).
#include <algorithm>
#include <array>
#include <cctype>
#include <regex>
#include <string>

#include "exec/parser_support.h"

namespace conclave::exec::parser_detail {
namespace {

using domain::FailureKind;

// Regexes and wording checks only ever see this much of a message or line.
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

}  // namespace

std::optional<int> FindHttpStatus(std::string_view message) {
  static const std::array<std::regex, 7> kPatterns = {
      std::regex(R"re(api error:?\s*(?:request rejected\s*)?\(?(\d{3})\b)re", std::regex::icase),
      std::regex(R"re(last status:?\s*(\d{3})\b)re", std::regex::icase),
      std::regex(R"re(unexpected status\s*(\d{3})\b)re", std::regex::icase),
      std::regex(R"re("?(?:statusCode|status|code)"?\s*[:=]\s*(\d{3})\b)re", std::regex::icase),
      std::regex(R"re(\bstatus\s+(\d{3})\b)re", std::regex::icase),
      std::regex(
          R"re(\b(\d{3})\s+(?:Unauthorized|Forbidden|Too Many Requests|Internal Server Error|Bad Gateway|Service Unavailable|Gateway Timeout)\b)re",
          std::regex::icase),
      std::regex(R"re(\((\d{3})\))re"),
  };
  const std::string s(message.substr(0, kMaxScan));
  for (const auto& re : kPatterns) {
    std::smatch m;
    if (std::regex_search(s, m, re)) {
      auto v = ParseDecimal(m[1].str());
      if (v && *v >= 400 && *v <= 599) return static_cast<int>(*v);
    }
  }
  return std::nullopt;
}

std::optional<int> FindRetryAfter(std::string_view text) {
  static const std::regex kSeconds(R"re(retry[-_ ]after"?\s*[:=]?\s*"?(\d+)\s*s?)re",
                                   std::regex::icase);
  static const std::regex kMs(R"re(retry[-_ ]?delay[-_ ]?ms"?\s*[:=]\s*(\d+))re",
                              std::regex::icase);
  static const std::regex kRetryIn(R"re(retry(?:ing)? in\s+(\d+)\s*s)re", std::regex::icase);
  const std::string s(text.substr(0, kMaxScan));
  auto clamp = [](std::optional<int64_t> v) -> std::optional<int> {
    if (!v) return std::nullopt;
    return static_cast<int>(std::min<int64_t>(*v, kMaxRetryAfterS));
  };
  std::smatch m;
  if (std::regex_search(s, m, kSeconds)) return clamp(ParseDecimal(m[1].str()));
  if (std::regex_search(s, m, kMs)) {
    auto ms = ParseDecimal(m[1].str());
    if (!ms) return std::nullopt;
    return clamp(*ms / 1000 + (*ms % 1000 != 0 ? 1 : 0));
  }
  if (std::regex_search(s, m, kRetryIn)) return clamp(ParseDecimal(m[1].str()));
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
