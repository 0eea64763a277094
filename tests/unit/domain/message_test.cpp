// Unit tests: handle names and message validation (domain/message).
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

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

TEST_CASE("a person is notified of ready and needs_human flows and urgent escalations only",
          "[notify]") {
  domain::MessageRecord m;
  m.type = "flow";
  for (const auto& [step, worth] : std::vector<std::pair<std::string, bool>>{
           {"ready", true}, {"needs_human", true}, {"implement", false}, {"verify", false},
           {"cancelled", false}}) {
    m.payload = "{\"flow_id\": 1, \"step\": \"" + step + "\"}";
    INFO(step);
    CHECK(domain::WorthNotifying(m) == worth);
  }
  m.payload = "not json";
  CHECK_FALSE(domain::WorthNotifying(m));
  m.type = "escalation";
  m.payload = "";
  m.priority = "urgent";
  CHECK(domain::WorthNotifying(m));
  m.priority = "high";
  CHECK_FALSE(domain::WorthNotifying(m));
  m.type = "status";
  m.priority = "urgent";
  CHECK_FALSE(domain::WorthNotifying(m));
}

}  // namespace
