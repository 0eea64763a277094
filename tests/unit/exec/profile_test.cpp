// Tests for profile JSON (exec/profile.cpp) on bad values: an integer beyond int's range was
// narrowed (4294967297 became 1) and accepted.
#include <catch2/catch.hpp>

#include <string>

#include "exec/profile.h"

namespace {

using conclave::exec::LoadProfileFromJson;

TEST_CASE("profile: an integer limit out of int's range names its field", "[exec][fuzz]") {
  std::string field;
  auto p = LoadProfileFromJson(
      R"({"name":"p","family":"f","command":["x"],"timeout_s":4294967297})", "p.json", &field);
  REQUIRE_FALSE(p.ok());
  CHECK(field == "timeout_s");
  auto q = LoadProfileFromJson(
      R"({"name":"p","family":"f","command":["x"],"max_concurrent":-9223372036854775808})",
      "p.json", &field);
  REQUIRE_FALSE(q.ok());
  CHECK(field == "max_concurrent");
  auto r = LoadProfileFromJson("{not json", "p.json", &field);
  REQUIRE_FALSE(r.ok());
  CHECK(field.empty());
}

}  // namespace
