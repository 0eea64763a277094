// Unit tests: reviewer findings from structured output or a fenced json block (domain/findings).
#include <catch2/catch.hpp>

#include "domain/findings.h"

namespace conclave::domain {
namespace {


TEST_CASE("findings: fenced block, whole-text JSON, empty list", "[review]") {
  const std::string text =
      "Review done.\n```json\n{\"findings\": [{\"id\": \"X\", \"severity\": \"LOW\", "
      "\"category\": \"docs\", \"title\": \"old\"}]}\n```\nthen\n```json\n"
      "{\"findings\": [{\"id\": \"F1\", \"severity\": \"high\", \"category\": \"Security\",\n"
      "\"location\": {\"path\": \"src/a.cpp\", \"line\": 42}, \"title\": \"overflow\",\n"
      "\"detail\": \"d\", \"stance\": \"rebut\", \"refs\": [\"A1\"]}]}\n```\n";
  FindingsParse parse = ExtractFindings(text);
  REQUIRE(parse.ok);
  REQUIRE(parse.findings.size() == 1);
  const Finding& f = parse.findings[0];
  CHECK(f.id == "F1");
  CHECK(f.severity == Severity::kHigh);
  CHECK(f.category == "security");
  CHECK(f.path == "src/a.cpp");
  CHECK(f.line == 42);
  CHECK(f.stance == Stance::kRebut);
  CHECK(f.refs == std::vector<std::string>{"A1"});
  FindingsParse round_trip =
      ParseFindingsJson(nlohmann::json{{"findings", nlohmann::json::array({FindingToJson(f)})}});
  REQUIRE(round_trip.ok);
  CHECK(round_trip.findings[0].refs == f.refs);

  parse = ExtractFindings("  {\"findings\": []}  ");
  CHECK(parse.ok);
  CHECK(parse.findings.empty());
  parse = ExtractFindings(
      "{\"findings\": [{\"id\": 7, \"severity\": \"INFO\", \"category\": "
      "\"docs\", \"title\": \"t\", \"location\": \"README.md:3\"}]}");
  REQUIRE(parse.ok);
  CHECK(parse.findings[0].id == "7");
  CHECK(parse.findings[0].line == 3);
  // A "path:line" with an absurd line keeps its first 9 digits and never throws.
  parse = ExtractFindings(
      "{\"findings\": [{\"id\": 8, \"severity\": \"INFO\", \"category\": "
      "\"docs\", \"title\": \"t\", \"location\": \"a.cc:99999999999999999999\"}]}");
  REQUIRE(parse.ok);
  CHECK(parse.findings[0].path == "a.cc");
  CHECK(parse.findings[0].line == 999999999);
}

TEST_CASE("findings: malformed answers name the problem", "[review]") {
  const auto error = [](const std::string& text) { return ExtractFindings(text).error; };
  CHECK_THAT(error("all good, no issues"), Catch::Contains("no ```json block"));
  CHECK_THAT(error("```json\n{\"findings\": [ \n```"), Catch::Contains("not valid JSON"));
  CHECK_THAT(error("{\"findings\": {}}"), Catch::Contains("findings: expected an array"));
  CHECK_THAT(error("{\"other\": 1}"), Catch::Contains("findings: missing"));
  const std::string two = R"({"findings": [
      {"id": "A", "severity": "LOW", "category": "docs", "title": "t"},
      {"id": "B", "severity": "CRITICAL", "category": "docs", "title": "t"}]})";
  CHECK_THAT(error(two), Catch::Contains("findings[1].severity") && Catch::Contains("CRITICAL"));
  CHECK_THAT(error(R"({"findings": [{"id": "A", "severity": "LOW", "category": "style",
      "title": "t"}]})"),
             Catch::Contains("findings[0].category"));
  CHECK_THAT(error(R"({"findings": [{"id": "A", "severity": "LOW", "category": "docs"}]})"),
             Catch::Contains("findings[0].title: missing"));
  CHECK_THAT(error(R"({"findings": [{"id": "A", "severity": "LOW", "category": "docs",
      "title": "t"}, {"id": "A", "severity": "LOW", "category": "docs", "title": "u"}]})"),
             Catch::Contains("findings[1].id: duplicate"));
  CHECK_THAT(error(R"({"findings": [{"id": "A", "severity": "LOW", "category": "docs",
      "title": "t", "location": {"path": "a", "line": -2}}]})"),
             Catch::Contains("findings[0].location.line"));
  CHECK_FALSE(ExtractFindings(two).ok);
}

}  // namespace
}  // namespace conclave::domain
