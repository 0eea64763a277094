// Fuzz target: the error-text helpers every CLI parser shares (exec/error_classifier.cpp,
// exec/parser_support.cpp):
// FindRetryAfter, FindHttpStatus, ClassifyError, LastNonEmptyLine, Clip, JsonLines and
// TrailingJsonObject. Input: byte 0 picks a Clip length, the rest is an error text.
// Properties: a retry hint is never negative; a status is an HTTP error code; Clip never
// returns more than its limit plus "..."; and on short texts FindHttpStatus/FindRetryAfter
// agree with the std::regex forms they replaced (kept here as the oracle), hints clamped to
// kMaxRetryAfterS.
#include <algorithm>
#include <regex>

#include "exec/parser_support.h"
#include "fuzz_input.h"

namespace {

int Saturate(const std::string& digits, long long cap) {
  long long v = 0;
  for (char c : digits) v = std::min(cap, v * 10 + (c - '0'));
  return static_cast<int>(v);
}

std::optional<int> OracleHttpStatus(const std::string& s) {
  static const std::regex kPatterns[] = {
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
  for (const auto& re : kPatterns) {
    std::smatch m;
    if (std::regex_search(s, m, re)) {
      int v = Saturate(m[1].str(), 1000);
      if (v >= 400 && v <= 599) return v;
    }
  }
  return std::nullopt;
}

std::optional<int> OracleRetryAfter(const std::string& s) {
  static const std::regex kSeconds(R"re(retry[-_ ]after"?\s*[:=]?\s*"?(\d+)\s*s?)re",
                                   std::regex::icase);
  static const std::regex kMs(R"re(retry[-_ ]?delay[-_ ]?ms"?\s*[:=]\s*(\d+))re",
                              std::regex::icase);
  static const std::regex kRetryIn(R"re(retry(?:ing)? in\s+(\d+)\s*s)re", std::regex::icase);
  constexpr long long kCap = conclave::exec::parser_detail::kMaxRetryAfterS;
  std::smatch m;
  if (std::regex_search(s, m, kSeconds)) return Saturate(m[1].str(), kCap);
  if (std::regex_search(s, m, kMs)) {
    long long ms = 0;
    for (char c : m[1].str()) ms = std::min(kCap * 1000LL, ms * 10 + (c - '0'));
    return static_cast<int>((ms + 999) / 1000);
  }
  if (std::regex_search(s, m, kRetryIn)) return Saturate(m[1].str(), kCap);
  return std::nullopt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace conclave;
  using namespace conclave::exec::parser_detail;
  if (size == 0) return 0;
  const size_t clip = data[0];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto retry = FindRetryAfter(text);
  if (retry && (*retry < 0 || *retry > kMaxRetryAfterS)) {
    fuzz::PropertyFailed("retry-after outside 0..kMaxRetryAfterS");
  }
  auto status = FindHttpStatus(text);
  if (status && (*status < 400 || *status > 599)) fuzz::PropertyFailed("status outside 400..599");
  if (text.size() <= 96) {  // std::regex is slow and recurses per character: short texts
    const std::string s(text);
    if (status != OracleHttpStatus(s)) fuzz::PropertyFailed("FindHttpStatus differs from regex");
    if (retry != OracleRetryAfter(s)) fuzz::PropertyFailed("FindRetryAfter differs from regex");
  }
  (void)ClassifyError(text, std::nullopt);
  (void)LastNonEmptyLine(text);
  if (Clip(text, clip).size() > clip + 3) fuzz::PropertyFailed("Clip longer than its limit");
  for (const auto& j : JsonLines(text)) {
    if (!j.is_object()) fuzz::PropertyFailed("JsonLines returned a non-object");
  }
  if (auto j = TrailingJsonObject(text); j && !j->is_object()) {
    fuzz::PropertyFailed("TrailingJsonObject returned a non-object");
  }
  return 0;
}
