// Unit tests: how many connections the last requests came on (common/recent_callers.h), which
// keeps the loop from polling while many clients call it.
#include <catch2/catch.hpp>

#include <string>

#include "common/recent_callers.h"

namespace conclave {
namespace {

TEST_CASE("recent callers count the distinct connections of the last requests only",
          "[recent_callers]") {
  RecentCallers r;
  CHECK(r.Distinct() == 0);
  r.Heard("fd:7");
  r.Heard("fd:7");
  r.Heard("fd:9");
  CHECK(r.Distinct() == 2);  // before kSpan requests came: all of them
  for (int i = 0; i < RecentCallers::kSpan; ++i) r.Heard("fd:" + std::to_string(100 + i));
  CHECK(r.Distinct() == RecentCallers::kSpan);
  // One connection calling on: the others drop out one request at a time.
  for (int i = 1; i < RecentCallers::kSpan; ++i) {
    r.Heard("fd:7");
    CHECK(r.Distinct() == RecentCallers::kSpan - i + 1);
  }
  r.Heard("fd:7");
  CHECK(r.Distinct() == 1);
  // Two in turn, as a client and a waiter.
  for (int i = 0; i < 3 * RecentCallers::kSpan; ++i) r.Heard(i % 2 ? "fd:7" : "fd:8");
  CHECK(r.Distinct() == 2);
}

}  // namespace
}  // namespace conclave
