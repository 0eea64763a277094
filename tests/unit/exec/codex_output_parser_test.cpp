// Tests for the "codex-jsonl" parser (exec/codex_output_parser.cpp) on hostile output
// (fields of the wrong type threw nlohmann::type_error out of the parser).
#include <catch2/catch.hpp>

#include "exec/output_parser.h"

namespace {

using conclave::domain::FailureKind;
using conclave::exec::ParseCliOutput;

TEST_CASE("codex-jsonl: fields of the wrong type do not throw", "[exec][fuzz]") {
  auto p = ParseCliOutput("codex-jsonl", R"({"type":1}
{"type":"item.completed","item":5}
{"type":"item.completed","item":{"type":"agent_message","text":["x"]}}
{"type":"error","message":{"m":1}}
{"type":"turn.completed","usage":{"input_tokens":"9","output_tokens":1e300}})",
                          "", 0);
  CHECK(p.failure == FailureKind::kNone);
  CHECK(p.usage.output_tokens == int64_t{1} << 40);
  auto q = ParseCliOutput("codex-jsonl", R"({"type":"turn.failed","error":{"message":429}})", "", 1);
  CHECK(q.failure == FailureKind::kWorkerFailed);
}

}  // namespace
