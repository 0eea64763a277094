// Contract: see findings_schema.h.
#include "domain/findings_schema.h"

#include <iterator>

#include "domain/findings.h"

namespace conclave::domain {
namespace {

nlohmann::json Enum(const std::string_view* names, size_t count) {
  nlohmann::json values = nlohmann::json::array();
  for (size_t i = 0; i < count; ++i) values.push_back(std::string(names[i]));
  return {{"type", "string"}, {"enum", values}};
}

}  // namespace

nlohmann::json FindingsSchema() {
  using nlohmann::json;
  json location = {{"type", "object"},
                   {"additionalProperties", false},
                   {"required", {"path", "line"}},
                   {"properties", {{"path", {{"type", "string"}}}, {"line", {{"type", "integer"}}}}}};
  json item = {
      {"type", "object"},
      {"additionalProperties", false},
      {"required", {"id", "severity", "category", "location", "title", "detail", "stance", "refs"}},
      {"properties",
       {{"id", {{"type", "string"}}},
        {"severity", Enum(kSeverityNames, std::size(kSeverityNames))},
        {"category", Enum(kFindingCategories, std::size(kFindingCategories))},
        {"location", location},
        {"title", {{"type", "string"}}},
        {"detail", {{"type", "string"}}},
        {"stance", Enum(kStanceNames, std::size(kStanceNames))},
        {"refs", {{"type", "array"}, {"items", {{"type", "string"}}}}}}}};
  return {{"type", "object"},
          {"additionalProperties", false},
          {"required", {"findings"}},
          {"properties", {{"findings", {{"type", "array"}, {"items", item}}}}}};
}

const std::string& FindingsSchemaText() {
  static const std::string kText = FindingsSchema().dump();  // constant: built once
  return kText;
}

}  // namespace conclave::domain
