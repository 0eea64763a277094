// Tests for daemon/exec/output_parser.cpp: parser names and the no-throw guarantee of every
// parser on hostile output (mistyped fields, huge numbers, cut and nested JSON).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "exec/output_parser.h"

using conclave::domain::FailureKind;
using conclave::exec::IsKnownParser;
using conclave::exec::ParseCliOutput;

namespace {
const std::vector<std::string> kParsers = {
    "text",       "claude-json",      "claude-stream-json", "codex-jsonl",
    "qwen-json",  "qwen-stream-json", "opencode-jsonl",     "gemini-json",
    "gemini-stream-json", "copilot-jsonl"};
}  // namespace

TEST_CASE("parser names", "[output_parser]") {
  for (const auto& n : kParsers) CHECK(IsKnownParser(n));
  CHECK_FALSE(IsKnownParser("claude"));
  CHECK_FALSE(IsKnownParser(""));
  auto p = ParseCliOutput("nope", "x", "", 0);
  CHECK(p.malformed);
  CHECK(p.failure == FailureKind::kContractViolation);
}

TEST_CASE("no parser throws on hostile output", "[output_parser]") {
  const std::vector<std::string> hostile = {
      "",
      "\n\n\n",
      "{",
      "[",
      "[{\"type\":\"result\",\"result\":5,\"usage\":\"many\"}]",
      R"J({"type":5,"item":"x","part":[1],"data":null,"error":"boom"})J",
      R"J({"type":"result","subtype":7,"is_error":"yes","result":{"a":1},"total_cost_usd":"1",)J"
      R"J("usage":{"input_tokens":99999999999999999999999,"output_tokens":-5,)J"
      R"J("cache_read_input_tokens":1e308},"api_error_status":99999999999999999999,)J"
      R"J("structured_output":null,"errors":[1,{"x":2}]})J",
      R"J({"type":"turn.completed","usage":{"input_tokens":18446744073709551615,"cached_input_tokens":-1}})J",
      R"J({"type":"turn.failed","error":"not an object"})J",
      R"J({"type":"item.completed","item":{"type":"agent_message","text":{"not":"text"}}})J",
      R"J({"type":"step_finish","part":{"tokens":{"input":1e400,"cache":7},"cost":-3}})J",
      R"J({"type":"error","error":{"name":1,"data":{"statusCode":"429","responseHeaders":{"retry-after":"99999999999999999999999"}}}})J",
      R"J({"type":"result","status":"error","error":{"code":1e20,"message":["x"]},"stats":"s"})J",
      R"J({"type":"session.error","data":{"statusCode":{"n":1},"errorType":3,"message":null}})J",
      R"J({"type":"result","exitCode":"x"})J",
      std::string(100000, '{'),
      std::string(5000, '[') + std::string(5000, ']'),
      "{\"type\":\"result\",\"result\":\"" + std::string(1 << 20, 'a') + "\"}",
      "retry-after: 99999999999999999999999999 rate limit\n",
      "retryDelayMs: 99999999999999999999999999 429\n",
  };
  for (const auto& parser : kParsers) {
    for (const auto& out : hostile) {
      for (int exit_code : {0, 1, 145, -1}) {
        INFO(parser << " exit " << exit_code << " input " << out.substr(0, 80));
        conclave::exec::ParsedOutput p;
        CHECK_NOTHROW(p = ParseCliOutput(parser, out, out, exit_code));
        CHECK(p.usage.input_tokens >= 0);
        CHECK(p.usage.output_tokens >= 0);
        CHECK(p.usage.cache_read_tokens >= 0);
        constexpr int kWeek = 7 * 24 * 3600;
        if (p.retry_after_s) CHECK(*p.retry_after_s <= kWeek);
        if (p.retry_after_s) CHECK(*p.retry_after_s >= 0);
      }
    }
  }
}
