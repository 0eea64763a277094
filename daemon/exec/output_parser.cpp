// Contract: see output_parser.h. Dispatch by parser name plus the helpers the per-CLI
// parsers share (error wording -> FailureKind, HTTP status and retry-after extraction).
#include "exec/output_parser.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>
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
  const std::string s(message);
  for (const auto& re : kPatterns) {
    std::smatch m;
    if (std::regex_search(s, m, re)) {
      int v = std::stoi(m[1].str());
      if (v >= 400 && v <= 599) return v;
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
  const std::string s(text);
  std::smatch m;
  if (std::regex_search(s, m, kSeconds)) return std::stoi(m[1].str());
  if (std::regex_search(s, m, kMs)) return static_cast<int>((std::stol(m[1].str()) + 999) / 1000);
  if (std::regex_search(s, m, kRetryIn)) return std::stoi(m[1].str());
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
    auto j = nlohmann::json::parse(line.substr(a), nullptr, false);
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
      auto j = nlohmann::json::parse(text.substr(found), nullptr, false);
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
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return 0;
  return it->get<int64_t>();
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
