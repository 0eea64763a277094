// Tests for daemon/exec/copilot_output_parser.cpp ("copilot-jsonl"), on the captures of the
// real GitHub Copilot CLI (BYOK against the mock) in tests/e2e/fixtures/copilot/jsonl/.
#include <catch2/catch.hpp>

#include "cli_fixture.h"

using conclave::domain::FailureKind;
using conclave::testing::Contains;
using conclave::testing::kContractText;
using conclave::testing::LoadCliRun;
using conclave::testing::ParseRun;

namespace {
const char* const kDir = "copilot/jsonl";
}  // namespace

TEST_CASE("copilot: success — usage from the appended usage file", "[parser][copilot]") {
  auto p = ParseRun("copilot-jsonl", LoadCliRun(kDir, "success"));
  CHECK(p.failure == FailureKind::kNone);
  CHECK_FALSE(p.malformed);
  CHECK(p.result_text == kContractText);
  CHECK(p.usage.input_tokens == 900);
  CHECK(p.usage.cache_read_tokens == 300);
  CHECK(p.usage.output_tokens == 150);
  CHECK_FALSE(p.reported_cost_usd);
}

TEST_CASE("copilot: deltas stream — the tool run's final message is the answer",
          "[parser][copilot]") {
  auto slow = LoadCliRun(kDir, "slowstream");
  CHECK(Contains(slow.out, "assistant.message_delta"));
  CHECK(Contains(ParseRun("copilot-jsonl", slow).result_text, "streamed over 6 s"));
  auto t = ParseRun("copilot-jsonl", LoadCliRun(kDir, "tool"));
  CHECK(t.failure == FailureKind::kNone);
  CHECK(Contains(t.result_text, "TOOL_RAN"));
  CHECK(t.usage.output_tokens == 300);
}

TEST_CASE("copilot: tool output saying 401 / connection refused is no provider error",
          "[parser][copilot][classification]") {
  CHECK(ParseRun("copilot-jsonl", LoadCliRun(kDir, "tool_words")).failure == FailureKind::kNone);
  auto k = ParseRun("copilot-jsonl", LoadCliRun(kDir, "killed_tool"));
  CHECK(k.failure != FailureKind::kAuthError);
  CHECK(k.failure != FailureKind::kTransportError);
}

TEST_CASE("copilot: provider errors from session.error", "[parser][copilot]") {
  auto e500 = ParseRun("copilot-jsonl", LoadCliRun(kDir, "http500"));
  CHECK(e500.failure == FailureKind::kProviderUnavailable);
  CHECK(e500.rule == "structured");
  CHECK(Contains(e500.evidence, "statusCode=500"));
  CHECK(ParseRun("copilot-jsonl", LoadCliRun(kDir, "http429")).failure == FailureKind::kRateLimited);
  auto e401 = ParseRun("copilot-jsonl", LoadCliRun(kDir, "http401"));
  CHECK(e401.failure == FailureKind::kAuthError);
  CHECK(Contains(e401.evidence, "errorType=authentication"));
  auto refused = ParseRun("copilot-jsonl", LoadCliRun(kDir, "refused"));
  CHECK(refused.failure == FailureKind::kTransportError);
  CHECK(Contains(refused.evidence, "final_result=transport_error"));
}

TEST_CASE("copilot: --deny-tool shell keeps a reviewer read-only", "[parser][copilot]") {
  auto ro = LoadCliRun(kDir, "readonly");
  CHECK(Contains(ro.note, "verified"));
  CHECK(Contains(ro.out, "Permission to run this tool was denied"));
}
