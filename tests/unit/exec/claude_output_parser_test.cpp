// Tests for daemon/exec/claude_output_parser.cpp ("claude-stream-json" / "claude-json"),
// on the captures of the real claude CLI in tests/e2e/fixtures/claude/.
#include <catch2/catch.hpp>

#include "cli_fixture.h"
#include "exec/parser_support.h"

using conclave::domain::FailureKind;
using conclave::testing::Contains;
using conclave::testing::kContractText;
using conclave::testing::LoadCliRun;
using conclave::testing::ParseRun;
using conclave::exec::ParseCliOutput;
using conclave::exec::parser_detail::kMaxTokenCount;

namespace {
const char* const kStream = "claude/stream-json";
const char* const kJson = "claude/json";
}  // namespace

TEST_CASE("claude stream-json: success with cost, usage and every delta line", "[parser][claude]") {
  auto run = LoadCliRun(kStream, "success");
  auto p = ParseRun("claude-stream-json", run);
  CHECK(p.failure == FailureKind::kNone);
  CHECK_FALSE(p.malformed);
  CHECK(p.result_text == kContractText);
  REQUIRE(p.reported_cost_usd);
  CHECK(*p.reported_cost_usd > 0);
  CHECK(p.usage.input_tokens == 900);
  CHECK(p.usage.cache_read_tokens == 300);
  CHECK(p.usage.output_tokens == 150);
  CHECK_FALSE(p.structured_output);
  CHECK(Contains(run.out, "\"text_delta\""));  // --include-partial-messages: deltas stream
}

TEST_CASE("claude stream-json: an answer streamed over seconds parses whole", "[parser][claude]") {
  auto run = LoadCliRun(kStream, "slowstream");
  auto p = ParseRun("claude-stream-json", run);
  CHECK(p.failure == FailureKind::kNone);
  CHECK(Contains(p.result_text, "streamed over 6 s"));
  CHECK(Contains(p.result_text, "BLOCKERS: none"));
  size_t deltas = 0;
  for (size_t pos = 0; (pos = run.out.find("\"text_delta\"", pos)) != std::string::npos; ++pos)
    ++deltas;
  CHECK(deltas >= 10);  // one line per chunk: each is a sign of life
}

TEST_CASE("claude stream-json: a shell tool run, then the final contract", "[parser][claude]") {
  auto p = ParseRun("claude-stream-json", LoadCliRun(kStream, "tool"));
  CHECK(p.failure == FailureKind::kNone);
  CHECK(Contains(p.result_text, "tool output: TOOL_RAN"));
  CHECK(p.usage.output_tokens == 300);
}

TEST_CASE("claude stream-json: '401' and 'Connection refused' in tool output and answer are "
          "not provider errors", "[parser][claude][classification]") {
  auto run = LoadCliRun(kStream, "tool_words");
  REQUIRE(Contains(run.out, "Connection refused"));
  auto p = ParseRun("claude-stream-json", run);
  CHECK(p.failure == FailureKind::kNone);
  CHECK(Contains(p.result_text, "Connection refused"));
  // Killed while the tool hung: the same words are in the stream, no result event.
  auto killed = LoadCliRun(kStream, "killed_tool");
  REQUIRE(Contains(killed.out, "401 Unauthorized"));
  auto k = ParseRun("claude-stream-json", killed);
  CHECK(k.malformed);
  CHECK(k.failure != FailureKind::kAuthError);
  CHECK(k.failure != FailureKind::kTransportError);
  CHECK(k.failure == (killed.exit_code == 0 ? FailureKind::kContractViolation
                                            : FailureKind::kNonZeroExit));
  CHECK(k.rule == "exit-status");
}

TEST_CASE("claude stream-json: provider errors come from api_error_status", "[parser][claude]") {
  auto e500 = ParseRun("claude-stream-json", LoadCliRun(kStream, "http500"));
  CHECK(e500.failure == FailureKind::kProviderUnavailable);
  CHECK(e500.rule == "structured");
  CHECK(Contains(e500.evidence, "[structured]"));
  CHECK(Contains(e500.evidence, "api_error_status=500"));
  CHECK(Contains(e500.evidence, "error=server_error"));

  auto e429 = ParseRun("claude-stream-json", LoadCliRun(kStream, "http429"));
  CHECK(e429.failure == FailureKind::kRateLimited);
  CHECK(Contains(e429.evidence, "api_error_status=429"));

  auto e401 = ParseRun("claude-stream-json", LoadCliRun(kStream, "http401"));
  CHECK(e401.failure == FailureKind::kAuthError);
  CHECK(Contains(e401.evidence, "error=authentication_failed"));

  // No status for a refused connection: the CLI's own message decides, not its
  // "server_error" type.
  auto refused = ParseRun("claude-stream-json", LoadCliRun(kStream, "refused"));
  CHECK(refused.failure == FailureKind::kTransportError);
  CHECK(Contains(refused.evidence, "ConnectionRefused"));
}

TEST_CASE("claude stream-json: --json-schema findings in structured_output", "[parser][claude]") {
  auto run = LoadCliRun(kStream, "findings");
  REQUIRE(Contains(run.note, "schema"));
  auto p = ParseRun("claude-stream-json", run);
  CHECK(p.failure == FailureKind::kNone);
  REQUIRE(p.structured_output);
  const auto& f = (*p.structured_output)["findings"];
  REQUIRE(f.is_array());
  REQUIRE(f.size() == 1);
  CHECK(f[0]["id"] == "F1");
  CHECK(f[0]["severity"] == "HIGH");
  CHECK(f[0]["location"]["line"] == 3);
}

TEST_CASE("claude stream-json: budget cap and read-only reviewer", "[parser][claude]") {
  auto b = ParseRun("claude-stream-json", LoadCliRun(kStream, "budget"));
  CHECK(b.failure == FailureKind::kBudgetExceeded);
  CHECK(Contains(b.evidence, "error_max_budget_usd"));
  auto ro = LoadCliRun(kStream, "readonly");
  CHECK(Contains(ro.note, "verified"));
  CHECK(ParseRun("claude-stream-json", ro).failure == FailureKind::kNone);
}

TEST_CASE("claude stream-json: the DeepSeek profile and the older non-partial stream",
          "[parser][claude]") {
  auto d = ParseRun("claude-stream-json", LoadCliRun(kStream, "deepseek-flash-success"));
  CHECK(d.failure == FailureKind::kNone);
  CHECK(d.result_text == kContractText);
  auto n = ParseRun("claude-stream-json", LoadCliRun(kStream, "nopartial_success"));
  CHECK(n.failure == FailureKind::kNone);
  CHECK(n.result_text == kContractText);
  auto e = ParseRun("claude-stream-json", LoadCliRun(kStream, "nopartial_http500"));
  CHECK(e.failure == FailureKind::kProviderUnavailable);
}

TEST_CASE("claude json: the one-object format still parses", "[parser][claude]") {
  auto ok = ParseRun("claude-json", LoadCliRun(kJson, "success"));
  CHECK(ok.failure == FailureKind::kNone);
  CHECK(ok.result_text == kContractText);
  CHECK(ok.usage.input_tokens == 900);
  REQUIRE(ok.reported_cost_usd);
  CHECK(*ok.reported_cost_usd == Approx(0.00504));
  CHECK(ParseRun("claude-json", LoadCliRun(kJson, "deepseek")).failure == FailureKind::kNone);
  CHECK(Contains(ParseRun("claude-json", LoadCliRun(kJson, "tool")).result_text, "TOOL_RAN"));
  CHECK(ParseRun("claude-json", LoadCliRun(kJson, "http500")).failure ==
        FailureKind::kProviderUnavailable);
  CHECK(ParseRun("claude-json", LoadCliRun(kJson, "http429")).failure == FailureKind::kRateLimited);
  CHECK(ParseRun("claude-json", LoadCliRun(kJson, "http401")).failure == FailureKind::kAuthError);
  CHECK(ParseRun("claude-json", LoadCliRun(kJson, "refused")).failure ==
        FailureKind::kTransportError);
  auto budget = ParseRun("claude-json", LoadCliRun(kJson, "budget"));
  CHECK(budget.failure == FailureKind::kBudgetExceeded);
  CHECK(Contains(budget.evidence, "Reached maximum budget"));
  auto schema = ParseRun("claude-json", LoadCliRun(kJson, "findings_schema"));
  REQUIRE(schema.structured_output);
  CHECK((*schema.structured_output)["findings"].size() == 1);
}

TEST_CASE("claude: output that is not the CLI's JSON", "[parser][claude]") {
  auto p = conclave::exec::ParseCliOutput("claude-stream-json", "", "Error: unknown option '--bogus'\n", 1);
  CHECK(p.malformed);
  CHECK(p.failure == FailureKind::kNonZeroExit);
  CHECK(Contains(p.evidence, "unknown option"));
  auto q = conclave::exec::ParseCliOutput("claude-stream-json", "hello", "", 0);
  CHECK(q.malformed);
  CHECK(q.failure == FailureKind::kContractViolation);
  // An error result whose subtype is not the API-error shape carries the model's text in
  // "result": never classified by wording.
  auto r = conclave::exec::ParseCliOutput(
      "claude-stream-json",
      R"J({"type":"result","subtype":"error_max_turns","is_error":true,"result":"curl said 401 Unauthorized, connection refused"})J",
      "", 1);
  CHECK(r.failure == FailureKind::kWorkerFailed);
}

// Hostile output: each input reproduces what fuzz_cli_claude_json (tests/fuzz) turned up
// before the parsers were hardened.
TEST_CASE("claude-json: fields of the wrong type do not throw", "[parser][claude][fuzz]") {
  auto p = ParseCliOutput("claude-json", R"({"type":"result","subtype":1,"is_error":"x"})", "", 1);
  CHECK(p.failure == FailureKind::kWorkerFailed);
  auto q = ParseCliOutput("claude-json", R"({"type":7}
{"type":"result","subtype":"success","is_error":false,"result":"ok"})", "", 0);
  CHECK(q.failure == FailureKind::kNone);
  CHECK(q.result_text == "ok");
}

TEST_CASE("claude-json: absurd or negative usage is clamped, never UB", "[parser][claude][fuzz]") {
  auto p = ParseCliOutput("claude-json",
                          R"({"type":"result","subtype":"success","is_error":false,"usage":)"
                          R"({"input_tokens":9223372036854775807,)"
                          R"("cache_creation_input_tokens":9223372036854775807,)"
                          R"("output_tokens":1e300,"cache_read_input_tokens":-5}})",
                          "", 0);
  CHECK(p.usage.input_tokens == 2 * kMaxTokenCount);
  CHECK(p.usage.output_tokens == kMaxTokenCount);
  CHECK(p.usage.cache_read_tokens == 0);
}

TEST_CASE("claude-json: a deeply nested structured_output is refused, not copied",
          "[parser][claude][fuzz]") {
  const int n = 200000;
  const std::string out = R"({"type":"result","subtype":"success","is_error":false,)"
                          R"("result":"ok","structured_output":)" +
                          std::string(n, '[') + std::string(n, ']') + "}\n";
  auto p = ParseCliOutput("claude-json", out, "", 0);
  CHECK_FALSE(p.structured_output.has_value());
  CHECK(p.malformed);
}
