// Tests for daemon/exec/qwen_output_parser.cpp ("qwen-stream-json" / "qwen-json"), on the
// captures of the real qwen CLI in tests/e2e/fixtures/qwen/.
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
const char* const kStream = "qwen/stream-json";
const char* const kJson = "qwen/json";
}  // namespace

TEST_CASE("qwen stream-json: success, slow stream and tool run", "[parser][qwen]") {
  auto p = ParseRun("qwen-stream-json", LoadCliRun(kStream, "success"));
  CHECK(p.failure == FailureKind::kNone);
  CHECK(p.result_text == kContractText);
  CHECK(p.usage.input_tokens == 900);
  CHECK(p.usage.cache_read_tokens == 300);
  CHECK(p.usage.output_tokens == 150);
  auto slow = LoadCliRun(kStream, "slowstream");
  CHECK(Contains(ParseRun("qwen-stream-json", slow).result_text, "streamed over 6 s"));
  CHECK(Contains(slow.out, "\"text_delta\""));
  auto t = ParseRun("qwen-stream-json", LoadCliRun(kStream, "tool"));
  CHECK(t.failure == FailureKind::kNone);
  CHECK(Contains(t.result_text, "TOOL_RAN"));
}

TEST_CASE("qwen stream-json: tool output saying 401 / connection refused is no provider error",
          "[parser][qwen][classification]") {
  CHECK(ParseRun("qwen-stream-json", LoadCliRun(kStream, "tool_words")).failure ==
        FailureKind::kNone);
  auto killed = LoadCliRun(kStream, "killed_tool");
  auto k = ParseRun("qwen-stream-json", killed);
  CHECK(k.failure != FailureKind::kAuthError);
  CHECK(k.failure != FailureKind::kTransportError);
}

TEST_CASE("qwen: an API Error result text with exit 0 and is_error:false is a failure",
          "[parser][qwen]") {
  for (auto [dir, parser] : {std::pair{kStream, "qwen-stream-json"}, std::pair{kJson, "qwen-json"}}) {
    INFO(dir);
    auto e500 = ParseRun(parser, LoadCliRun(dir, "http500"));
    CHECK(e500.failure == FailureKind::kProviderUnavailable);
    CHECK(e500.rule == "structured");
    CHECK(Contains(e500.evidence, "is_error=false"));
    CHECK(Contains(e500.evidence, "[API Error: 500"));
    CHECK(ParseRun(parser, LoadCliRun(dir, "http429")).failure == FailureKind::kRateLimited);
    CHECK(ParseRun(parser, LoadCliRun(dir, "http401")).failure == FailureKind::kAuthError);
    CHECK(ParseRun(parser, LoadCliRun(dir, "refused")).failure == FailureKind::kTransportError);
  }
}

TEST_CASE("qwen: --json-schema structured_result — plan mode offers no shell",
          "[parser][qwen]") {
  auto p = ParseRun("qwen-stream-json", LoadCliRun(kStream, "findings"));
  CHECK(p.failure == FailureKind::kNone);
  REQUIRE(p.structured_output);
  CHECK((*p.structured_output)["findings"][0]["id"] == "F1");
  auto ro = LoadCliRun(kStream, "readonly");
  CHECK(Contains(ro.note, "verified"));
  CHECK(Contains(ro.out, "\"permission_mode\":\"plan\""));
}

TEST_CASE("qwen json: the one-array format still parses", "[parser][qwen]") {
  auto p = ParseRun("qwen-json", LoadCliRun(kJson, "success"));
  CHECK(p.failure == FailureKind::kNone);
  CHECK(p.result_text == kContractText);
  CHECK(p.usage.input_tokens == 1800);
  CHECK(p.usage.cache_read_tokens == 600);
  CHECK(p.usage.output_tokens == 300);
  CHECK(Contains(ParseRun("qwen-json", LoadCliRun(kJson, "tool")).result_text, "TOOL_RAN"));
}

TEST_CASE("qwen: an is_error result is classified from its error.message", "[parser][qwen]") {
  auto p = conclave::exec::ParseCliOutput(
      "qwen-stream-json",
      R"J({"type":"result","subtype":"error_during_execution","is_error":true,"error":{"message":"Connection error. (cause: fetch failed)"}})J",
      "", 1);
  CHECK(p.failure == FailureKind::kTransportError);
  CHECK(Contains(p.evidence, "error.message="));
}

// Hostile output (fields of the wrong type threw nlohmann::type_error out of the parser).
TEST_CASE("qwen-json: fields of the wrong type do not throw", "[parser][qwen][fuzz]") {
  auto p = ParseCliOutput("qwen-json", R"([{"type":null},{"type":"result","is_error":"no",)"
                                       R"("result":"fine","usage":{"input_tokens":1e300}}])",
                          "", 0);
  CHECK(p.failure == FailureKind::kNone);
  CHECK(p.result_text == "fine");
  CHECK(p.usage.input_tokens == kMaxTokenCount);
}
