// Tests for daemon/exec/parser_support.cpp: bounded numbers, exception-free JSON access and
// depth-limited parsing (the [fuzz] cases are what tests/fuzz turned up, kept as regressions).
#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include "exec/parser_support.h"

using namespace conclave::exec::parser_detail;
using nlohmann::json;

TEST_CASE("decimal numbers saturate instead of overflowing", "[parser_support]") {
  CHECK(ParseDecimal("0") == 0);
  CHECK(ParseDecimal("604800") == 604800);
  CHECK(ParseDecimal("9223372036854775807") == std::numeric_limits<int64_t>::max());
  CHECK(ParseDecimal("99999999999999999999") == std::numeric_limits<int64_t>::max());
  CHECK(ParseDecimal("") == std::nullopt);
  CHECK(ParseDecimal("12a") == std::nullopt);
  CHECK(ParseDecimal("-1") == std::nullopt);
  CHECK(SaturatingAdd(std::numeric_limits<int64_t>::max(), 5) == std::numeric_limits<int64_t>::max());
  CHECK(SaturatingAdd(2, 3) == 5);
  CHECK(SaturatingAdd(-2, 3) == 3);
}

TEST_CASE("JSON fields of the wrong type read as empty, never throw", "[parser_support]") {
  json j = json::parse(R"J({"s":"x","n":5,"b":true,"o":{"k":1},"neg":-4,"big":99999999999999999999,
                           "huge":1e300,"frac":2.7,"st":"500","bad":"5x0","nan":null})J");
  CHECK(JsonStr(j, "s") == "x");
  CHECK(JsonStr(j, "n").empty());
  CHECK(JsonStr(json::array(), "s").empty());
  CHECK(JsonBool(j, "b"));
  CHECK_FALSE(JsonBool(j, "s"));
  CHECK(JsonBool(j, "missing", true));
  CHECK(JsonInt(j, "n") == 5);
  CHECK(JsonInt(j, "neg") == 0);
  CHECK(JsonInt(j, "big") == kMaxTokenCount);
  CHECK(JsonInt(j, "huge") == kMaxTokenCount);
  CHECK(JsonInt(j, "frac") == 2);
  CHECK(JsonInt(j, "s") == 0);
  CHECK(JsonNonNegative(j, "frac") == Approx(2.7));
  CHECK_FALSE(JsonNonNegative(j, "neg"));
  CHECK(JsonHttpStatus(j, "st") == 500);
  CHECK_FALSE(JsonHttpStatus(j, "bad"));
  CHECK_FALSE(JsonHttpStatus(j, "big"));
  CHECK_FALSE(JsonHttpStatus(j, "n"));
  CHECK(JsonField(j, "o").is_object());
  CHECK(JsonField(JsonField(j, "s"), "k").is_null());
}

TEST_CASE("JSON lines, trailing objects and text helpers", "[parser_support]") {
  auto lines = JsonLines("noise\n{\"a\":1}\n  {\"b\":2}\r\n{cut\n[1]\n");
  REQUIRE(lines.size() == 2);
  CHECK(lines[1]["b"] == 2);
  auto t = TrailingJsonObject("{\"type\":\"result\"}\n{\n  \"usage\": {\"x\": 1}\n}\n");
  REQUIRE(t);
  CHECK(t->contains("usage"));
  CHECK_FALSE(TrailingJsonObject("no json"));
  CHECK(LastNonEmptyLine("a\nb  \n\n  \n") == "b");
  CHECK(Clip(std::string(400, 'x'), 10) == "xxxxxxxxxx...");
  CHECK(Clip("\xC3\xA9\xC3\xA9", 3) == "\xC3\xA9...");  // never cuts inside a character
}

// get<int64_t>() of 1e300 is undefined behaviour (UBSan: "outside the range of representable
// values"), and two such counts summed overflowed: found with fuzz_cli_claude_json.
TEST_CASE("JsonInt: token counts are clamped to 0..kMaxTokenCount, never UB",
          "[parser_support][fuzz]") {
  CHECK(JsonInt(json{{"n", 1e300}}, "n") == kMaxTokenCount);
  CHECK(JsonInt(json{{"n", -1e300}}, "n") == 0);
  CHECK(JsonInt(json{{"n", 9223372036854775807LL}}, "n") == kMaxTokenCount);
  CHECK(JsonInt(json{{"n", 18446744073709551615ULL}}, "n") == kMaxTokenCount);
  CHECK(JsonInt(json{{"n", -5}}, "n") == 0);
  CHECK(JsonInt(json{{"n", 12.9}}, "n") == 12);
  CHECK(JsonInt(json{{"n", 900}}, "n") == 900);
  CHECK(JsonInt(json{{"n", "900"}}, "n") == 0);
  CHECK(JsonInt(json::array({1}), "n") == 0);
}

// json::value("k", "") throws type_error when the field has another type (or the value is
// not an object): a worker printing {"type":1} terminated the daemon.
TEST_CASE("JsonStr/JsonBool: a field of another type reads as absent", "[parser_support][fuzz]") {
  CHECK(JsonStr(json{{"type", 1}}, "type").empty());
  CHECK(JsonStr(json::array({"type"}), "type").empty());
  CHECK(JsonStr(json{{"type", "result"}}, "type") == "result");
  CHECK(JsonBool(json{{"is_error", "yes"}}, "is_error", false) == false);
  CHECK(JsonBool(json{{"is_error", true}}, "is_error", false) == true);
  CHECK(JsonBool(json(5), "is_error", true) == true);
}

// Copying a parsed document recurses once per nesting level: a line of 20k '[' overflowed the
// stack (fuzz_cli_claude_json, structured_output). Deeper than kMaxJsonDepth is not parsed,
// and JsonLines / TrailingJsonObject go through the same limit.
TEST_CASE("ParseJson: refuses documents nested deeper than kMaxJsonDepth",
          "[parser_support][fuzz]") {
  auto nested = [](int n) { return std::string(n, '[') + std::string(n, ']'); };
  CHECK(ParseJson(nested(kMaxJsonDepth)).is_array());
  CHECK(ParseJson(nested(kMaxJsonDepth + 1)).is_discarded());
  CHECK(ParseJson(nested(1 << 20)).is_discarded());
  CHECK(ParseJson(R"({"s":")" + std::string(1000, '[') + R"("})").is_object());  // in a string
  CHECK(ParseJson(R"({"s":"\"[[["})").is_object());
  CHECK(ParseJson("not json").is_discarded());
  const std::string deep_line = "{\"a\":" + nested(kMaxJsonDepth) + "}";
  CHECK(JsonLines("{\"ok\":1}\n" + deep_line + "\n").size() == 1);
  CHECK_FALSE(TrailingJsonObject(deep_line));
}
