// Tests for the "qwen-json" parser (exec/qwen_output_parser.cpp) on hostile output (fields of
// the wrong type threw nlohmann::type_error out of the parser).
#include <catch2/catch.hpp>

#include "exec/output_parser.h"

namespace {

using conclave::domain::FailureKind;
using conclave::exec::ParseCliOutput;

TEST_CASE("qwen-json: fields of the wrong type do not throw", "[exec][fuzz]") {
  auto p = ParseCliOutput("qwen-json", R"([{"type":null},{"type":"result","is_error":"no",)"
                                       R"("result":"fine","usage":{"input_tokens":1e300}}])",
                          "", 0);
  CHECK(p.failure == FailureKind::kNone);
  CHECK(p.result_text == "fine");
  CHECK(p.usage.input_tokens == int64_t{1} << 40);
}

}  // namespace
