// The findings schema is generated from the names the parser accepts: one definition.
#include <catch2/catch.hpp>
#include <set>

#include "domain/findings.h"
#include "domain/findings_schema.h"

namespace conclave::domain {
namespace {

std::set<std::string> EnumOf(const nlohmann::json& property) {
  std::set<std::string> out;
  for (const auto& v : property.at("enum")) out.insert(v.get<std::string>());
  return out;
}

TEST_CASE("findings schema: the enums are the parser's names, the stance set is complete",
          "[review][schema]") {
  const auto schema = FindingsSchema();
  const auto& item = schema.at("properties").at("findings").at("items");
  const auto& props = item.at("properties");
  CHECK(EnumOf(props.at("stance")) ==
        std::set<std::string>{"new", "agree", "rebut", "withdraw", "fixed", "still_present"});
  CHECK(EnumOf(props.at("severity")) ==
        std::set<std::string>{"BLOCKER", "HIGH", "MAJOR", "MEDIUM", "LOW", "INFO"});
  CHECK(EnumOf(props.at("category")).size() == std::size(kFindingCategories));
  // Every stance the schema allows parses, and every one the parser knows is in the schema.
  for (const auto& s : EnumOf(props.at("stance"))) CHECK(ParseStance(s).has_value());
  for (auto name : kStanceNames) CHECK(EnumOf(props.at("stance")).count(std::string(name)) == 1);
  // Strict mode: every property required, nothing else allowed — at both levels.
  CHECK(schema.at("additionalProperties") == false);
  CHECK(item.at("additionalProperties") == false);
  std::set<std::string> required, declared;
  for (const auto& r : item.at("required")) required.insert(r.get<std::string>());
  for (const auto& [k, v] : props.items()) declared.insert(k);
  CHECK(required == declared);
  // What the daemon writes back (FindingToJson) has exactly the schema's keys.
  std::set<std::string> written;
  const nlohmann::json stored = FindingToJson(Finding{});
  for (const auto& [k, v] : stored.items()) written.insert(k);
  CHECK(written == declared);
  CHECK(nlohmann::json::parse(FindingsSchemaText()) == schema);
}

TEST_CASE("findings: fixed and still_present are stances", "[review][schema]") {
  auto parsed = ExtractFindings(R"({"findings": [
      {"id": "r1.openai.F1", "severity": "HIGH", "category": "security", "title": "t",
       "stance": "fixed"},
      {"id": "r1.openai.F2", "severity": "LOW", "category": "docs", "title": "u",
       "stance": "STILL_PRESENT"}]})");
  REQUIRE(parsed.ok);
  CHECK(parsed.findings[0].stance == Stance::kFixed);
  CHECK(parsed.findings[1].stance == Stance::kStillPresent);
  CHECK(StanceName(Stance::kStillPresent) == "still_present");
  auto bad = ExtractFindings(R"({"findings": [{"id": "A", "severity": "LOW",
      "category": "docs", "title": "t", "stance": "maybe"}]})");
  CHECK_THAT(bad.error, Catch::Contains("new|agree|rebut|withdraw|fixed|still_present"));
}

}  // namespace
}  // namespace conclave::domain
