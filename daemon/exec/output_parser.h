// Contract: turns what a model CLI printed into a ParsedOutput — the model's final answer
// text, the failure class of the run (DESIGN §1 "Failure policy", issue 4), the rule and
// evidence that decided it, cost, token usage, and structured output where the CLI has one.
//
// Pure functions: no I/O, no global state, never throw (worker output is hostile; a parser
// bug yields a malformed result, not an exception); safe to call from any thread. Every
// shape they accept was captured from the real CLIs against tests/e2e/mock_provider.js; the
// captures live in tests/e2e/fixtures/<cli>/<format>/ and tests/e2e/NOTES.md describes them.
//
// Parser names (profile key "parser"); each CLI's parser reads both of its formats:
//   text                stdout is the answer; non-zero exit -> kNonZeroExit
//   claude-stream-json  claude -p --output-format stream-json --verbose
//                       [--include-partial-messages]  (also DeepSeek / GLM / Kimi profiles)
//   claude-json         claude -p --output-format json (one result object)
//   codex-jsonl         codex exec --json
//   qwen-stream-json    qwen --output-format stream-json [--include-partial-messages]
//   qwen-json           qwen --output-format json (one JSON array ending in a result)
//   opencode-jsonl      opencode run --format json
//   gemini-stream-json  gemini --output-format stream-json
//   gemini-json         gemini --output-format json (the error object goes to stderr)
//   copilot-jsonl       copilot --output-format json (+ the usage file the profile appends)
//
// Classification is structure first: a provider error is taken from the CLI's structured
// error fields (an HTTP status, an error type) where it has them, else from the wording of
// the CLI's own error message in those fields. Only when the output holds no such event does
// an unstructured scan read stderr and the non-JSON tail of stdout — never model text or
// tool output. `rule` records which: "structured", "stderr", "stdout-tail", "exit-status".
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

#include "domain/failure_kind.h"

namespace conclave::exec {

struct TokenUsage {
  int64_t input_tokens = 0, output_tokens = 0, cache_read_tokens = 0;
};

struct ParsedOutput {
  std::string result_text;  // the model's final answer text (contract / findings live here)
  domain::FailureKind failure = domain::FailureKind::kNone;  // kNone = the CLI run succeeded
  std::string rule;      // which rule decided a failure: structured|stderr|stdout-tail|exit-status
  std::string evidence;  // "[<rule>] <the field or line that decided it>"
  std::optional<double> reported_cost_usd;
  TokenUsage usage;
  // The CLI's schema-constrained answer: claude/qwen --json-schema, or codex
  // --output-schema's final message when it is one JSON object.
  std::optional<nlohmann::json> structured_output;
  std::optional<int> retry_after_s;  // a hint from the CLI/provider, 0..7 days
  bool malformed = false;            // output did not have the CLI's expected shape
};

// True for the names listed above.
bool IsKnownParser(std::string_view name);

// Dispatches on `parser`. An unknown name yields malformed=true, kContractViolation.
// `stderr_tail` is the last part of stderr (a few KiB is enough); `exit_code` is the
// process exit status (negative when the process died from a signal).
ParsedOutput ParseCliOutput(std::string_view parser, std::string_view stdout_text,
                            std::string_view stderr_tail, int exit_code);

// The per-CLI parsers (each in <cli>_output_parser.cpp); each accepts all of its CLI's
// formats listed above.
ParsedOutput ParseTextOutput(std::string_view out, std::string_view err, int exit_code);
ParsedOutput ParseClaudeOutput(std::string_view out, std::string_view err, int exit_code);
ParsedOutput ParseCodexOutput(std::string_view out, std::string_view err, int exit_code);
ParsedOutput ParseQwenOutput(std::string_view out, std::string_view err, int exit_code);
ParsedOutput ParseOpencodeOutput(std::string_view out, std::string_view err, int exit_code);
ParsedOutput ParseGeminiOutput(std::string_view out, std::string_view err, int exit_code);
ParsedOutput ParseCopilotOutput(std::string_view out, std::string_view err, int exit_code);

}  // namespace conclave::exec

#endif  // CONCLAVE_EXEC_OUTPUT_PARSER_H_
