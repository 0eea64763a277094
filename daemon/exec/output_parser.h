// Contract: turns what a model CLI printed into a ParsedOutput — the model's final answer
// text, the failure class of the run (DESIGN §1 "Failure policy", issue 4), the evidence
// that decided it, cost, token usage, and structured output where the CLI has one.
//
// Pure functions: no I/O, no global state, safe to call from any thread. Every shape they
// accept was captured from the real CLIs against tests/e2e/mock_provider.js; the samples
// live in tests/e2e/fixtures/<cli>/ and tests/e2e/NOTES.md describes them.
//
// Parser names (profile key "parser"):
//   text            stdout is the answer; non-zero exit -> kNonZeroExit
//   claude-json     claude -p --output-format json | stream-json --verbose (also the
//                   DeepSeek / GLM / Kimi profiles, which run the claude CLI)
//   codex-jsonl     codex exec --json
//   qwen-json       qwen --output-format json (a JSON array ending in a result object)
//   opencode-jsonl  opencode run --format json
//   gemini-json     gemini --output-format json (the error object goes to stderr)
//
// TokenUsage uses Anthropic semantics: input_tokens are the *uncached* prompt tokens and
// cache_read_tokens are counted apart, so that cost = input*p_in + cache_read*p_cache +
// output*p_out never counts a token twice (OpenAI-style totals are split by the parsers).
#ifndef CONCLAVE_EXEC_OUTPUT_PARSER_H_
#define CONCLAVE_EXEC_OUTPUT_PARSER_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/failure_kind.h"

namespace conclave::exec {

struct TokenUsage {
  int64_t input_tokens = 0, output_tokens = 0, cache_read_tokens = 0;
};

struct ParsedOutput {
  std::string result_text;  // the model's final answer text (contract / findings live here)
  domain::FailureKind failure = domain::FailureKind::kNone;  // kNone = the CLI run succeeded
  std::string evidence;  // the line/field that decided the classification
  std::optional<double> reported_cost_usd;
  TokenUsage usage;
  std::optional<nlohmann::json> structured_output;  // claude --json-schema result
  std::optional<int> retry_after_s;                 // when the CLI/provider gave a hint
  bool malformed = false;                           // output did not have the CLI's expected shape
};

// True for the names listed above.
bool IsKnownParser(std::string_view name);

// Dispatches on `parser`. An unknown name yields malformed=true, kContractViolation.
// `stderr_tail` is the last part of stderr (a few KiB is enough); `exit_code` is the
// process exit status (negative when the process died from a signal).
ParsedOutput ParseCliOutput(std::string_view parser, std::string_view stdout_text,
                            std::string_view stderr_tail, int exit_code);

// The per-CLI parsers (each in <cli>_output_parser.cpp).
ParsedOutput ParseTextOutput(std::string_view out, std::string_view err, int exit_code);
ParsedOutput ParseClaudeOutput(std::string_view out, std::string_view err, int exit_code);
ParsedOutput ParseCodexOutput(std::string_view out, std::string_view err, int exit_code);
ParsedOutput ParseQwenOutput(std::string_view out, std::string_view err, int exit_code);
ParsedOutput ParseOpencodeOutput(std::string_view out, std::string_view err, int exit_code);
ParsedOutput ParseGeminiOutput(std::string_view out, std::string_view err, int exit_code);

// Helpers shared by the parsers (output_parser.cpp). Not part of the daemon-facing API.
namespace parser_detail {

// Classifies an error message by HTTP status (when known) and then by wording:
// 401/403/"invalid api key" -> kAuthError, 429/"rate limit" -> kRateLimited,
// 5xx/"overloaded" -> kProviderUnavailable, "connection refused"/"fetch failed" ->
// kTransportError. kNone when nothing matched.
domain::FailureKind ClassifyError(std::string_view message, std::optional<int> http_status);

// The first HTTP status code mentioned in an error message ("API Error: 500",
// "last status: 429", "unexpected status 401", "(429)", "statusCode":500 ...).
std::optional<int> FindHttpStatus(std::string_view message);

// A retry hint in seconds ("retry-after: 7", "retry after 7s", "retryDelayMs: 7000").
std::optional<int> FindRetryAfter(std::string_view text);

// Last line that is not blank, trimmed; empty when there is none.
std::string LastNonEmptyLine(std::string_view text);

// Non-blank lines of `text` that parse as JSON objects, in order.
std::vector<nlohmann::json> JsonLines(std::string_view text);

// The last top-level JSON object in `text` that starts at the beginning of a line and
// runs to the end (gemini prints its error object after stack traces).
std::optional<nlohmann::json> TrailingJsonObject(std::string_view text);

// Shortens `s` to at most `max` bytes (on a UTF-8 boundary) with a trailing "...".
std::string Clip(std::string_view s, size_t max = 300);

// Fills failure/evidence for a run that produced no recognisable result: classifies the
// tail of stderr/stdout, else kNonZeroExit (exit != 0) or kContractViolation (exit 0).
void ClassifyUnstructuredFailure(ParsedOutput& out, std::string_view stdout_text,
                                 std::string_view stderr_tail, int exit_code);

// A token count from obj[key]: 0 when obj is not an object or the field is missing, not a
// number or negative; at most 2^40 (so sums over a run's events cannot overflow). Never
// throws, no undefined conversion (a float like 1e300 is clamped).
int64_t JsonInt(const nlohmann::json& obj, const char* key);

// obj[key] when obj is an object and the field is a string (bool), else "" (`fallback`).
// Unlike json::value() these never throw on a field of another type.
std::string JsonStr(const nlohmann::json& obj, const char* key);
bool JsonBool(const nlohmann::json& obj, const char* key, bool fallback);

// Parses text as JSON without throwing: discarded when it is not JSON or nests deeper than
// kMaxJsonDepth (copying or printing a deeper document recurses once per level: a worker's
// line of 100k '[' would overflow the daemon's stack).
inline constexpr int kMaxJsonDepth = 256;
nlohmann::json ParseJson(std::string_view text);

}  // namespace parser_detail
}  // namespace conclave::exec

#endif  // CONCLAVE_EXEC_OUTPUT_PARSER_H_
