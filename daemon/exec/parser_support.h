// Contract: helpers the per-CLI output parsers share. Worker output is hostile: nothing here
// throws on any input (no throwing conversions, no json::value() on a mistyped field), every
// number is parsed with bounds, JSON is parsed with a nesting limit (ParseJson), and the
// status/retry-hint scanners are linear, with no std::regex and no recursion, over the first
// 4 KiB of a message.
//
// Pure functions, no state: safe from any thread. Not part of the daemon-facing API (that is
// output_parser.h); used by *_output_parser.cpp and their tests.
#ifndef CONCLAVE_EXEC_PARSER_SUPPORT_H_
#define CONCLAVE_EXEC_PARSER_SUPPORT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/failure_kind.h"
#include "exec/output_parser.h"

namespace conclave::exec::parser_detail {

// ---------------------------------------------------------------- bounded numbers

// The largest retry-after hint a parser reports (7 days); larger hints are clamped to it. The
// daemon applies its own, configurable cap on top.
inline constexpr int64_t kMaxRetryAfterS = 7 * 24 * 3600;
// Token counts are clamped to this (no real run comes near; sums cannot overflow).
inline constexpr int64_t kMaxTokenCount = int64_t{1} << 50;

// A run of ASCII digits as a non-negative number, saturating at INT64_MAX instead of
// overflowing. nullopt when `digits` is empty or holds anything but 0-9.
std::optional<int64_t> ParseDecimal(std::string_view digits);

// a + b for non-negative counts, saturating at INT64_MAX.
int64_t SaturatingAdd(int64_t a, int64_t b);

// ---------------------------------------------------------------- JSON without exceptions

// The member `key` of `obj`, or a null json when `obj` is not an object or has no such key.
const nlohmann::json& JsonField(const nlohmann::json& obj, const char* key);
// The member as a string; "" unless it is a string.
std::string JsonStr(const nlohmann::json& obj, const char* key);
// The member as a bool; `fallback` unless it is a bool.
bool JsonBool(const nlohmann::json& obj, const char* key, bool fallback = false);
// The member as a token count: 0 unless a number; negative -> 0; clamped to kMaxTokenCount;
// fractions truncated.
int64_t JsonInt(const nlohmann::json& obj, const char* key);
// The member as a finite, non-negative number (a cost); nullopt otherwise.
std::optional<double> JsonNonNegative(const nlohmann::json& obj, const char* key);
// The member as an HTTP status: an integer (or a string of digits) in 100..599; nullopt else.
std::optional<int> JsonHttpStatus(const nlohmann::json& obj, const char* key);

// Parses text as JSON without throwing: discarded when it is not JSON or nests deeper than
// kMaxJsonDepth (copying or printing a deeper document recurses once per level: a worker's
// line of 100k '[' would overflow the daemon's stack). Every parser reads worker JSON
// through this (JsonLines and TrailingJsonObject included).
inline constexpr int kMaxJsonDepth = 256;
nlohmann::json ParseJson(std::string_view text);

// Non-blank lines of `text` that parse as JSON objects, in order.
std::vector<nlohmann::json> JsonLines(std::string_view text);
// The last JSON object in `text` that starts at the beginning of a line and runs to the end
// (gemini prints its error object after stack traces; the copilot profile appends its usage
// file after the event stream).
std::optional<nlohmann::json> TrailingJsonObject(std::string_view text);

// ---------------------------------------------------------------- text

// Last line that is not blank, trimmed; empty when there is none.
std::string LastNonEmptyLine(std::string_view text);
// Shortens `s` to at most `max` bytes (on a UTF-8 boundary) with a trailing "...".
std::string Clip(std::string_view s, size_t max = 300);

// ---------------------------------------------------------------- classification
// (error_classifier.cpp)

// Classifies an error message by HTTP status (when known) and then by wording:
// 401/403/"invalid api key" -> kAuthError, 429/"rate limit" -> kRateLimited,
// 5xx/"overloaded" -> kProviderUnavailable, "connection refused"/"fetch failed" ->
// kTransportError. kNone when nothing matched. Only the first 4 KiB of `message` are read.
domain::FailureKind ClassifyError(std::string_view message, std::optional<int> http_status);
// The kind an HTTP status alone means (401/403, 429, 5xx); kNone for any other.
domain::FailureKind ClassifyStatus(int http_status);

// The first HTTP status code (400-599) mentioned in an error message ("API Error: 500",
// "last status: 429", "unexpected status 401", "(429)", "statusCode":500 ...).
std::optional<int> FindHttpStatus(std::string_view message);

// A retry hint in seconds ("retry-after: 7", "retry after 7s", "retryDelayMs: 7000",
// "retrying in 7s"), rounded up, clamped to kMaxRetryAfterS; never overflows or throws.
std::optional<int> FindRetryAfter(std::string_view text);

// Records a failure decided by the CLI's structured fields: failure, rule "structured",
// evidence "[structured] <what>", and the retry hint for a rate limit when `hint_text` has one.
void SetStructuredFailure(ParsedOutput& out, domain::FailureKind kind, std::string what,
                          std::string_view hint_text = {});

// For a run whose structured output did not say what happened: scans only what the CLI
// printed *outside* any event — the last lines of stderr, then the last non-blank lines of
// stdout that are not JSON (a line starting with '{' or '[' is a CLI event, whole or cut,
// and may carry model text or tool output, so it is never read here). The first line (from
// the end) whose wording classifies decides (rule "stderr" or "stdout-tail"); else
// kNonZeroExit (exit != 0) or kContractViolation (exit 0) with rule "exit-status".
void ClassifyUnstructuredFailure(ParsedOutput& out, std::string_view stdout_text,
                                 std::string_view stderr_tail, int exit_code);

// The non-blank lines of stdout that ClassifyUnstructuredFailure may read (at most
// `max_lines`, last first).
std::vector<std::string_view> UnstructuredStdoutTail(std::string_view stdout_text,
                                                     size_t max_lines);

}  // namespace conclave::exec::parser_detail

#endif  // CONCLAVE_EXEC_PARSER_SUPPORT_H_
