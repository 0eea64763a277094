// JsonObject: a flat JSON object written as text, exactly as nlohmann::json's compact dump()
// (with error_handler_t::replace) of the same members writes it — members in key order,
// numbers and escapes as it prints them — without building the tree of std::map nodes and
// values first. For the payloads the daemon writes on every dispatch (tests/unit/common/
// json_object_test.cpp holds it to nlohmann's text).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace conclave {

class JsonObject {
 public:
  JsonObject& Add(std::string_view key, std::string_view value);
  JsonObject& Add(std::string_view key, const std::string& value) {
    return Add(key, std::string_view(value));
  }
  JsonObject& Add(std::string_view key, const char* value) {
    return Add(key, std::string_view(value));
  }
  JsonObject& Add(std::string_view key, int64_t value);
  JsonObject& Add(std::string_view key, int value) { return Add(key, int64_t{value}); }
  JsonObject& Add(std::string_view key, bool value);
  JsonObject& Add(std::string_view key, double value);
  // A member whose value is already JSON text, put in as it is (empty text: null).
  JsonObject& AddRaw(std::string_view key, std::string_view json);

  std::string Dump() const;

 private:
  std::vector<std::pair<std::string, std::string>> members_;  // key, value as JSON text
};

// Appends s as a JSON string, quotes included, as nlohmann's dump writes it.
void AppendJsonQuoted(std::string* out, std::string_view s);

}  // namespace conclave
