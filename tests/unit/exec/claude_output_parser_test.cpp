// Tests for the "claude-json" parser (exec/claude_output_parser.cpp) on hostile output: each
// input reproduces what fuzz_cli_claude_json (tests/fuzz) turned up, before the fix.
#include <catch2/catch.hpp>

#include <string>

#include "exec/output_parser.h"

namespace {

using conclave::domain::FailureKind;
using conclave::exec::ParseCliOutput;

TEST_CASE("claude-json: fields of the wrong type do not throw", "[exec][fuzz]") {
  auto p = ParseCliOutput("claude-json", R"({"type":"result","subtype":1,"is_error":"x"})", "", 1);
  CHECK(p.failure == FailureKind::kWorkerFailed);
  auto q = ParseCliOutput("claude-json", R"({"type":7}
{"type":"result","subtype":"success","is_error":false,"result":"ok"})", "", 0);
  CHECK(q.failure == FailureKind::kNone);
  CHECK(q.result_text == "ok");
}

TEST_CASE("claude-json: absurd or negative usage is clamped, never UB", "[exec][fuzz]") {
  auto p = ParseCliOutput("claude-json",
                          R"({"type":"result","subtype":"success","is_error":false,"usage":)"
                          R"({"input_tokens":9223372036854775807,)"
                          R"("cache_creation_input_tokens":9223372036854775807,)"
                          R"("output_tokens":1e300,"cache_read_input_tokens":-5}})",
                          "", 0);
  CHECK(p.usage.input_tokens == 2 * (int64_t{1} << 40));
  CHECK(p.usage.output_tokens == int64_t{1} << 40);
  CHECK(p.usage.cache_read_tokens == 0);
}

TEST_CASE("claude-json: a deeply nested structured_output is refused, not copied",
          "[exec][fuzz]") {
  const int n = 200000;
  const std::string out = R"({"type":"result","subtype":"success","is_error":false,)"
                          R"("result":"ok","structured_output":)" +
                          std::string(n, '[') + std::string(n, ']') + "}\n";
  auto p = ParseCliOutput("claude-json", out, "", 0);
  CHECK_FALSE(p.structured_output.has_value());
  CHECK(p.malformed);
}

}  // namespace
