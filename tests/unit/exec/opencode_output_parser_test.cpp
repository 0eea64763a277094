// Tests for the "opencode-jsonl" parser (exec/opencode_output_parser.cpp) on hostile output
// (fields of the wrong type threw nlohmann::type_error out of the parser).
#include <catch2/catch.hpp>

#include "exec/output_parser.h"

namespace {

using conclave::domain::FailureKind;
using conclave::exec::ParseCliOutput;

TEST_CASE("opencode-jsonl: fields of the wrong type do not throw", "[exec][fuzz]") {
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

}  // namespace
