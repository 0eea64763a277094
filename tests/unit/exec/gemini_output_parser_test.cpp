// Tests for daemon/exec/gemini_output_parser.cpp ("gemini-stream-json" / "gemini-json"), on
// the captures of the real gemini CLI in tests/e2e/fixtures/gemini/.
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
const char* const kStream = "gemini/stream-json";
const char* const kJson = "gemini/json";
}  // namespace

TEST_CASE("gemini stream-json: success joins the deltas — usage from stats",
          "[parser][gemini]") {
  auto p = ParseRun("gemini-stream-json", LoadCliRun(kStream, "success"));
  CHECK(p.failure == FailureKind::kNone);
  CHECK_FALSE(p.malformed);
  CHECK(p.result_text == kContractText);
  CHECK(p.usage.input_tokens == 900);
  CHECK(p.usage.cache_read_tokens == 300);
  CHECK(p.usage.output_tokens == 150);
  auto slow = LoadCliRun(kStream, "slowstream");
  auto s = ParseRun("gemini-stream-json", slow);
  CHECK(Contains(s.result_text, "streamed over 6 s"));
  CHECK(Contains(s.result_text, "BLOCKERS: none"));
}

TEST_CASE("gemini stream-json: the answer after the last tool event", "[parser][gemini]") {
  auto t = ParseRun("gemini-stream-json", LoadCliRun(kStream, "tool"));
  CHECK(t.failure == FailureKind::kNone);
  CHECK(Contains(t.result_text, "TOOL_RAN"));
  CHECK(t.result_text.rfind("SUMMARY:", 0) == 0);
  CHECK(t.usage.output_tokens == 300);
  CHECK(ParseRun("gemini-stream-json", LoadCliRun(kStream, "tool_words")).failure ==
        FailureKind::kNone);
  auto killed = ParseRun("gemini-stream-json", LoadCliRun(kStream, "killed_tool"));
  CHECK(killed.failure != FailureKind::kAuthError);
  CHECK(killed.failure != FailureKind::kTransportError);
}

TEST_CASE("gemini stream-json: provider errors from the result's error", "[parser][gemini]") {
  auto e500 = ParseRun("gemini-stream-json", LoadCliRun(kStream, "http500"));
  CHECK(e500.failure == FailureKind::kProviderUnavailable);
  CHECK(e500.rule == "structured");
  CHECK(Contains(e500.evidence, "status=500"));
  auto e429 = ParseRun("gemini-stream-json", LoadCliRun(kStream, "http429"));
  CHECK(e429.failure == FailureKind::kRateLimited);
  auto e401 = ParseRun("gemini-stream-json", LoadCliRun(kStream, "http401"));
  CHECK(e401.failure == FailureKind::kAuthError);
  auto refused = ParseRun("gemini-stream-json", LoadCliRun(kStream, "refused"));
  CHECK(refused.failure == FailureKind::kTransportError);
  // A message naming no code: the exit status is the code mod 256.
  auto bare = conclave::exec::ParseCliOutput(
      "gemini-stream-json",
      R"J({"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: quota]"}})J",
      "", 173);
  CHECK(bare.failure == FailureKind::kRateLimited);
  CHECK(Contains(bare.evidence, "(exit status)"));
}

TEST_CASE("gemini: --approval-mode plan offers no shell tool", "[parser][gemini]") {
  auto ro = LoadCliRun(kStream, "readonly");
  CHECK(Contains(ro.note, "verified"));
  CHECK_FALSE(Contains(ro.out, "\"tool_use\""));
}

TEST_CASE("gemini json: the old format, error object on stderr", "[parser][gemini]") {
  auto p = ParseRun("gemini-json", LoadCliRun(kJson, "success"));
  CHECK(p.failure == FailureKind::kNone);
  CHECK(p.result_text == kContractText);
  CHECK(p.usage.input_tokens == 900);
  CHECK(p.usage.cache_read_tokens == 300);
  CHECK(p.usage.output_tokens == 150);
  CHECK(Contains(ParseRun("gemini-json", LoadCliRun(kJson, "tool")).result_text, "TOOL_RAN"));
  auto e401 = ParseRun("gemini-json", LoadCliRun(kJson, "http401"));
  CHECK(e401.failure == FailureKind::kAuthError);
  CHECK(Contains(e401.evidence, "exit=145"));
  CHECK(ParseRun("gemini-json", LoadCliRun(kJson, "http429")).failure == FailureKind::kRateLimited);
  CHECK(ParseRun("gemini-json", LoadCliRun(kJson, "http500")).failure ==
        FailureKind::kProviderUnavailable);
  CHECK(ParseRun("gemini-json", LoadCliRun(kJson, "refused")).failure ==
        FailureKind::kTransportError);
  // Exit 145 alone (stderr cut off) still means an authentication failure.
  CHECK(conclave::exec::ParseCliOutput("gemini-json", "", "", 145).failure ==
        FailureKind::kAuthError);
}

// Hostile output (an error message of the wrong type threw nlohmann::type_error).
TEST_CASE("gemini-json: fields of the wrong type do not throw", "[parser][gemini][fuzz]") {
  auto p = ParseCliOutput("gemini-json", "", "trace\n{\"error\":{\"message\":[1],\"code\":429}}\n",
                          173);
  CHECK(p.failure == FailureKind::kRateLimited);
  auto q = ParseCliOutput("gemini-json", R"({"response":"ok","stats":{"models":{"m":)"
                                         R"({"tokens":{"prompt":-1e300,"candidates":1e300}}}}})",
                          "", 0);
  CHECK(q.failure == FailureKind::kNone);
  CHECK(q.usage.output_tokens == kMaxTokenCount);
}
