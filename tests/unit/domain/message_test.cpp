// Unit tests: handle names and message validation (domain/message).
#include <catch2/catch.hpp>
#include <string>

#include "domain/message.h"

using namespace conclave;

namespace {

TEST_CASE("handle names and message validation", "[exec]") {
  CHECK(domain::ValidateHandleName("worker-1.a_b:c", "h").ok());
  CHECK(!domain::ValidateHandleName("", "h").ok());
  CHECK(!domain::ValidateHandleName("@all", "h").ok());
  CHECK(!domain::ValidateHandleName("a b", "h").ok());
  CHECK(!domain::ValidateHandleName(std::string(65, 'a'), "h").ok());
  domain::MessageRecord m;
  m.type = "status";
  CHECK(domain::ValidateMessage(m).ok());
  m.payload = "[1,2";
  CHECK(domain::ValidateMessage(m).message().find("payload") != std::string::npos);
}

}  // namespace
