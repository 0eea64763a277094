// Tests for the helpers every CLI parser shares (exec/output_parser.cpp) on hostile input.
// Each case is an input the fuzzers in tests/fuzz found (or its class), kept as a regression
// test: a crash becomes a unit test before it is fixed.
#include <catch2/catch.hpp>

#include <climits>
#include <string>

#include <nlohmann/json.hpp>

#include "exec/output_parser.h"

namespace {

using conclave::domain::FailureKind;
using conclave::exec::parser_detail::ClassifyError;
using conclave::exec::parser_detail::FindHttpStatus;
using conclave::exec::parser_detail::FindRetryAfter;

TEST_CASE("FindRetryAfter: a hint too large for an int saturates instead of throwing",
          "[exec][fuzz]") {
  CHECK(FindRetryAfter("retry-after: 99999999999") == INT_MAX);
  CHECK(FindRetryAfter("retry after 99999999999999999999999999 s") == INT_MAX);
  CHECK(FindRetryAfter("retryDelayMs: 99999999999999999999") == INT_MAX);
  CHECK(FindRetryAfter("retrying in 4294967296s") == INT_MAX);
  CHECK(FindRetryAfter("retry-after: 2147483647") == INT_MAX);
  CHECK(FindRetryAfter("retryDelayMs: 2147483647000") == INT_MAX);
  CHECK(FindRetryAfter("retryDelayMs: 2147483647") == 2147484);
  CHECK(FindRetryAfter("retry-after: 0007") == 7);
}

// std::regex recursed once per character of a `\s*` run: a worker printing a keyword and a
// few MiB of blanks overflowed the daemon's stack (found by fuzz_retry_after), and a few MiB
// of text took minutes on the loop thread.
TEST_CASE("Status and retry hints after megabytes of blanks: no recursion, still found",
          "[exec][fuzz]") {
  const std::string blanks(4 << 20, ' ');
  CHECK(FindHttpStatus("API Error: " + blanks + "500") == 500);
  CHECK(FindHttpStatus("429" + blanks + "Too Many Requests") == 429);
  CHECK(FindHttpStatus("status" + blanks + "503") == 503);
  CHECK(FindRetryAfter("retry-after:" + blanks + "7") == 7);
  CHECK(FindRetryAfter("retrying in" + blanks + "9" + blanks + "s") == 9);
  CHECK(ClassifyError("rate limit" + blanks, std::nullopt) == FailureKind::kRateLimited);
}

TEST_CASE("FindHttpStatus: each form, its word boundaries and the first match per form",
          "[exec][fuzz]") {
  CHECK(FindHttpStatus("API Error: Request rejected (429) · Rate limit") == 429);
  CHECK(FindHttpStatus("api error 503") == 503);
  CHECK(FindHttpStatus("API Error: 5000") == std::nullopt);  // four digits: not a status
  CHECK(FindHttpStatus("last status:401") == 401);
  CHECK(FindHttpStatus("unexpected status 502 Bad Gateway") == 502);
  CHECK(FindHttpStatus(R"({"statusCode":500})") == 500);
  CHECK(FindHttpStatus(R"("code" = 429)") == 429);
  CHECK(FindHttpStatus("Status 503") == 503);
  CHECK(FindHttpStatus("xstatus 503") == std::nullopt);  // no word boundary before status
  CHECK(FindHttpStatus("got 403 forbidden") == 403);
  CHECK(FindHttpStatus("got 1403 Forbidden") == std::nullopt);
  CHECK(FindHttpStatus("502 Bad Gatewayish") == std::nullopt);
  CHECK(FindHttpStatus("failed (500)") == 500);
  CHECK(FindHttpStatus("status 200, then status 500") == std::nullopt);  // first match decides
  CHECK(FindHttpStatus("status 200 (503)") == 503);                      // the next form is tried
}

TEST_CASE("FindRetryAfter: each form", "[exec][fuzz]") {
  CHECK(FindRetryAfter(R"("retry-after": "12")") == 12);
  CHECK(FindRetryAfter("Retry_After=3s") == 3);
  CHECK(FindRetryAfter("retry_delay_ms = 1500") == 2);
  CHECK(FindRetryAfter("retryDelayMs 1500") == std::nullopt);  // the ms form needs : or =
  CHECK(FindRetryAfter("Retrying in 5 s") == 5);
  CHECK(FindRetryAfter("retry in 5s") == 5);
  CHECK(FindRetryAfter("retry in 5 minutes") == std::nullopt);  // the number must end in s
  CHECK(FindRetryAfter("retry after retry-after: 4") == 4);
}

}  // namespace

namespace {

using conclave::exec::parser_detail::kMaxJsonDepth;
using conclave::exec::parser_detail::JsonBool;
using conclave::exec::parser_detail::JsonInt;
using conclave::exec::parser_detail::JsonStr;
using conclave::exec::parser_detail::ParseJson;
using nlohmann::json;

// get<int64_t>() of 1e300 is undefined behaviour (UBSan: "outside the range of representable
// values"), and two such counts summed overflowed: found with fuzz_cli_claude_json.
TEST_CASE("JsonInt: token counts are clamped to 0..2^40, never UB", "[exec][fuzz]") {
  const int64_t kMax = int64_t{1} << 40;
  CHECK(JsonInt(json{{"n", 1e300}}, "n") == kMax);
  CHECK(JsonInt(json{{"n", -1e300}}, "n") == 0);
  CHECK(JsonInt(json{{"n", 9223372036854775807LL}}, "n") == kMax);
  CHECK(JsonInt(json{{"n", 18446744073709551615ULL}}, "n") == kMax);
  CHECK(JsonInt(json{{"n", -5}}, "n") == 0);
  CHECK(JsonInt(json{{"n", 12.9}}, "n") == 12);
  CHECK(JsonInt(json{{"n", 900}}, "n") == 900);
  CHECK(JsonInt(json{{"n", "900"}}, "n") == 0);
  CHECK(JsonInt(json::array({1}), "n") == 0);
}

// json::value("k", "") throws type_error when the field has another type (or the value is
// not an object): a worker printing {"type":1} terminated the daemon.
TEST_CASE("JsonStr/JsonBool: a field of another type reads as absent", "[exec][fuzz]") {
  CHECK(JsonStr(json{{"type", 1}}, "type").empty());
  CHECK(JsonStr(json::array({"type"}), "type").empty());
  CHECK(JsonStr(json{{"type", "result"}}, "type") == "result");
  CHECK(JsonBool(json{{"is_error", "yes"}}, "is_error", false) == false);
  CHECK(JsonBool(json{{"is_error", true}}, "is_error", false) == true);
  CHECK(JsonBool(json(5), "is_error", true) == true);
}

// Copying a parsed document recurses once per nesting level: a line of 20k '[' overflowed the
// stack (fuzz_cli_claude_json, structured_output). Deeper than kMaxJsonDepth is not parsed.
TEST_CASE("ParseJson: refuses documents nested deeper than kMaxJsonDepth", "[exec][fuzz]") {
  auto nested = [](int n) { return std::string(n, '[') + std::string(n, ']'); };
  CHECK(ParseJson(nested(kMaxJsonDepth)).is_array());
  CHECK(ParseJson(nested(kMaxJsonDepth + 1)).is_discarded());
  CHECK(ParseJson(nested(1 << 20)).is_discarded());
  CHECK(ParseJson(R"({"s":")" + std::string(1000, '[') + R"("})").is_object());  // in a string
  CHECK(ParseJson(R"({"s":"\"[[["})").is_object());
  CHECK(ParseJson("not json").is_discarded());
}

}  // namespace
