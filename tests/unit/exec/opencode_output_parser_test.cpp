// Tests for daemon/exec/opencode_output_parser.cpp ("opencode-jsonl"), on the captures of the
// real opencode CLI in tests/e2e/fixtures/opencode/jsonl/ (and earlier/).
#include <catch2/catch.hpp>

#include "cli_fixture.h"

using conclave::domain::FailureKind;
using conclave::testing::Contains;
using conclave::testing::kContractText;
using conclave::testing::LoadCliRun;
using conclave::testing::ParseRun;
using conclave::exec::ParseCliOutput;

namespace {
const char* const kDir = "opencode/jsonl";
const char* const kEarlier = "opencode/jsonl/earlier";
}  // namespace

TEST_CASE("opencode: success and tool runs, usage summed over steps", "[parser][opencode]") {
  for (const char* dir : {kDir, kEarlier}) {
    INFO(dir);
    auto p = ParseRun("opencode-jsonl", LoadCliRun(dir, "success"));
    CHECK(p.failure == FailureKind::kNone);
    CHECK(p.result_text == kContractText);
    CHECK(p.usage.input_tokens == 900);
    CHECK(p.usage.cache_read_tokens == 300);
    auto t = ParseRun("opencode-jsonl", LoadCliRun(dir, "tool"));
    CHECK(t.failure == FailureKind::kNone);
    CHECK(Contains(t.result_text, "SUMMARY:"));
    CHECK(t.usage.output_tokens == 300);
  }
  CHECK(Contains(ParseRun("opencode-jsonl", LoadCliRun(kDir, "slowstream")).result_text,
                 "streamed over 6 s"));
}

TEST_CASE("opencode: tool output saying 401 / connection refused is no provider error",
          "[parser][opencode][classification]") {
  CHECK(ParseRun("opencode-jsonl", LoadCliRun(kDir, "tool_words")).failure == FailureKind::kNone);
  auto k = ParseRun("opencode-jsonl", LoadCliRun(kDir, "killed_tool"));
  CHECK(k.failure != FailureKind::kAuthError);
  CHECK(k.failure != FailureKind::kTransportError);
}

TEST_CASE("opencode: error events carry statusCode and retry-after", "[parser][opencode]") {
  for (const char* dir : {kDir, kEarlier}) {
    INFO(dir);
    auto e500 = ParseRun("opencode-jsonl", LoadCliRun(dir, "http500"));
    CHECK(e500.failure == FailureKind::kProviderUnavailable);
    CHECK(e500.rule == "structured");
    CHECK(Contains(e500.evidence, "statusCode=500"));
    auto e429 = ParseRun("opencode-jsonl", LoadCliRun(dir, "http429"));
    CHECK(e429.failure == FailureKind::kRateLimited);
    REQUIRE(e429.retry_after_s);
    CHECK(*e429.retry_after_s >= 1);
    CHECK(ParseRun("opencode-jsonl", LoadCliRun(dir, "http401")).failure == FailureKind::kAuthError);
  }
}

TEST_CASE("opencode: the plan agent runs no shell", "[parser][opencode]") {
  auto ro = LoadCliRun(kDir, "readonly");
  CHECK(Contains(ro.note, "verified"));
  CHECK_FALSE(Contains(ro.out, "\"tool_use\""));
}

// Hostile output (fields of the wrong type threw nlohmann::type_error out of the parser).
TEST_CASE("opencode-jsonl: fields of the wrong type do not throw", "[parser][opencode][fuzz]") {
  auto p = ParseCliOutput("opencode-jsonl", R"({"type":"text","part":{"text":7}}
{"type":["step_finish"]}
{"type":"step_finish","part":{"tokens":{"input":-3,"output":1e300}}})",
                          "", 0);
  CHECK(p.failure == FailureKind::kNone);
  CHECK(p.usage.input_tokens == 0);
  auto q = ParseCliOutput("opencode-jsonl",
                          R"({"type":"error","error":{"name":1,"data":{"message":false}}})", "", 1);
  CHECK(q.failure == FailureKind::kWorkerFailed);
}
