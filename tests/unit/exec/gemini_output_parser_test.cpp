// Tests for the "gemini-json" parser (exec/gemini_output_parser.cpp) on hostile output (an
// error message of the wrong type threw nlohmann::type_error out of the parser).
#include <catch2/catch.hpp>

#include "exec/output_parser.h"

namespace {

using conclave::domain::FailureKind;
using conclave::exec::ParseCliOutput;

TEST_CASE("gemini-json: fields of the wrong type do not throw", "[exec][fuzz]") {
  auto p = ParseCliOutput("gemini-json", "", "trace\n{\"error\":{\"message\":[1],\"code\":429}}\n",
                          173);
  CHECK(p.failure == FailureKind::kRateLimited);
  auto q = ParseCliOutput("gemini-json", R"({"response":"ok","stats":{"models":{"m":)"
                                         R"({"tokens":{"prompt":-1e300,"candidates":1e300}}}}})",
                          "", 0);
  CHECK(q.failure == FailureKind::kNone);
  CHECK(q.usage.output_tokens == int64_t{1} << 40);
}

}  // namespace
