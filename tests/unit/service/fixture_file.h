// The captured CLI outputs under tests/e2e/fixtures/, read by the service tests. A moved
// fixture fails the test here, not as a run that never ends.
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

namespace conclave::testing {

inline std::string Fixture(const std::string& rel) {
  std::ifstream in(std::string(CONCLAVE_SOURCE_DIR) + "/tests/e2e/fixtures/" + rel);
  INFO("fixture " << rel);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace conclave::testing
