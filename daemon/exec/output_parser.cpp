// Contract: see output_parser.h. Maps parser names to the per-CLI parsers and keeps any
// exception a parser might still raise from reaching the caller.
#include "exec/output_parser.h"

#include <array>
#include <exception>
#include <utility>

#include "exec/parser_support.h"

namespace conclave::exec {
namespace {

using ParseFn = ParsedOutput (*)(std::string_view, std::string_view, int);

constexpr std::array<std::pair<std::string_view, ParseFn>, 10> kParsers = {{
    {"text", &ParseTextOutput},
    {"claude-json", &ParseClaudeOutput},
    {"claude-stream-json", &ParseClaudeOutput},
    {"codex-jsonl", &ParseCodexOutput},
    {"qwen-json", &ParseQwenOutput},
    {"qwen-stream-json", &ParseQwenOutput},
    {"opencode-jsonl", &ParseOpencodeOutput},
    {"gemini-json", &ParseGeminiOutput},
    {"gemini-stream-json", &ParseGeminiOutput},
    {"copilot-jsonl", &ParseCopilotOutput},
}};

ParseFn Find(std::string_view name) {
  for (const auto& [n, fn] : kParsers) {
    if (n == name) return fn;
  }
  return nullptr;
}

}  // namespace

bool IsKnownParser(std::string_view name) { return Find(name) != nullptr; }

ParsedOutput ParseCliOutput(std::string_view parser, std::string_view stdout_text,
                            std::string_view stderr_tail, int exit_code) {
  ParseFn fn = Find(parser);
  if (!fn) {
    ParsedOutput out;
    out.malformed = true;
    out.failure = domain::FailureKind::kContractViolation;
    out.rule = "exit-status";
    out.evidence = "unknown parser '" + std::string(parser) + "'";
    out.result_text = std::string(stdout_text);
    return out;
  }
  try {
    return fn(stdout_text, stderr_tail, exit_code);
  } catch (const std::exception& e) {
    // A parser bug must not wedge the dispatch: report the run as malformed output.
    ParsedOutput out;
    out.malformed = true;
    parser_detail::ClassifyUnstructuredFailure(out, stdout_text, stderr_tail, exit_code);
    out.evidence += " (parser error: " + parser_detail::Clip(e.what(), 200) + ")";
    return out;
  }
}

}  // namespace conclave::exec
