// Tests for daemon/exec/codex_output_parser.cpp ("codex-jsonl"), on the captures of the
// real codex CLI in tests/e2e/fixtures/codex/jsonl/ (and earlier/: the same version, then
// defaulting to a model whose metadata it lacked).
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
const char* const kDir = "codex/jsonl";
const char* const kEarlier = "codex/jsonl/earlier";
}  // namespace

TEST_CASE("codex: success, usage split into uncached and cached input", "[parser][codex]") {
  auto p = ParseRun("codex-jsonl", LoadCliRun(kDir, "success"));
  CHECK(p.failure == FailureKind::kNone);
  CHECK_FALSE(p.malformed);
  CHECK(p.result_text == kContractText);
  CHECK(p.usage.input_tokens == 900);
  CHECK(p.usage.cache_read_tokens == 300);
  CHECK(p.usage.output_tokens == 150);
  CHECK_FALSE(p.reported_cost_usd);
  CHECK_FALSE(p.structured_output);  // a contract is not one JSON object
  // The earlier capture's informational error item is not a failure.
  auto e = ParseRun("codex-jsonl", LoadCliRun(kEarlier, "success"));
  CHECK(e.failure == FailureKind::kNone);
  CHECK(e.result_text == kContractText);
}

TEST_CASE("codex: a slow answer arrives whole — tool runs", "[parser][codex]") {
  auto s = ParseRun("codex-jsonl", LoadCliRun(kDir, "slowstream"));
  CHECK(s.failure == FailureKind::kNone);
  CHECK(Contains(s.result_text, "streamed over 6 s"));
  auto t = ParseRun("codex-jsonl", LoadCliRun(kDir, "tool"));
  CHECK(t.failure == FailureKind::kNone);
  CHECK(Contains(t.result_text, "TOOL_RAN"));
  CHECK(t.usage.output_tokens == 300);
  CHECK(Contains(ParseRun("codex-jsonl", LoadCliRun(kEarlier, "tool")).result_text, "TOOL_RAN"));
}

TEST_CASE("codex: tool output saying 401 / connection refused is not a provider error",
          "[parser][codex][classification]") {
  auto ok = ParseRun("codex-jsonl", LoadCliRun(kDir, "tool_words"));
  CHECK(ok.failure == FailureKind::kNone);
  auto killed = LoadCliRun(kDir, "killed_tool");
  REQUIRE(Contains(killed.out, "401 Unauthorized"));
  auto k = ParseRun("codex-jsonl", killed);
  CHECK(k.malformed);
  CHECK(k.failure != FailureKind::kAuthError);
  CHECK(k.failure != FailureKind::kTransportError);
  CHECK(k.rule == "exit-status");
}

TEST_CASE("codex: provider errors from the error / turn.failed events", "[parser][codex]") {
  for (const char* dir : {kDir, kEarlier}) {
    INFO(dir);
    auto e500 = ParseRun("codex-jsonl", LoadCliRun(dir, "http500"));
    CHECK(e500.failure == FailureKind::kProviderUnavailable);
    CHECK(e500.rule == "structured");
    CHECK(Contains(e500.evidence, "turn.failed"));
    CHECK(ParseRun("codex-jsonl", LoadCliRun(dir, "http429")).failure == FailureKind::kRateLimited);
    CHECK(ParseRun("codex-jsonl", LoadCliRun(dir, "http401")).failure == FailureKind::kAuthError);
    // Reconnecting forever until the daemon's timeout kills it.
    auto refused = ParseRun("codex-jsonl", LoadCliRun(dir, "refused"));
    CHECK(refused.failure == FailureKind::kTransportError);
    CHECK(Contains(refused.evidence, "waiting for network"));
  }
}

TEST_CASE("codex: --output-schema answer is the structured output — --sandbox read-only holds",
          "[parser][codex]") {
  auto run = LoadCliRun(kDir, "findings");
  auto p = ParseRun("codex-jsonl", run);
  CHECK(p.failure == FailureKind::kNone);
  REQUIRE(p.structured_output);
  const auto& f = (*p.structured_output)["findings"];
  REQUIRE(f.is_array());
  REQUIRE(f.size() == 1);
  CHECK(f[0]["id"] == "F1");
  CHECK(f[0]["severity"] == "HIGH");
  auto ro = LoadCliRun(kDir, "readonly");
  CHECK(Contains(ro.note, "verified"));
  CHECK(Contains(ro.out, "Read-only file system"));
}

// Hostile output (fields of the wrong type threw nlohmann::type_error out of the parser).
TEST_CASE("codex-jsonl: fields of the wrong type do not throw", "[parser][codex][fuzz]") {
  auto p = ParseCliOutput("codex-jsonl", R"({"type":1}
{"type":"item.completed","item":5}
{"type":"item.completed","item":{"type":"agent_message","text":["x"]}}
{"type":"error","message":{"m":1}}
{"type":"turn.completed","usage":{"input_tokens":"9","output_tokens":1e300}})",
                          "", 0);
  CHECK(p.failure == FailureKind::kNone);
  CHECK(p.usage.output_tokens == kMaxTokenCount);
  auto q = ParseCliOutput("codex-jsonl", R"({"type":"turn.failed","error":{"message":429}})", "", 1);
  CHECK(q.failure == FailureKind::kWorkerFailed);
}
