// Unit tests: cost, price tables and budget caps (domain/cost).
#include <catch2/catch.hpp>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "domain/cost.h"

namespace conclave::domain {
namespace {


TEST_CASE("ComputeCost: a reported cost wins", "[failure]") {
  const PriceTable prices{3.0, 15.0, 0.3};
  const Usage usage{1000000, 1000000, 1000000};
  const Cost c = ComputeCost(0.42, usage, prices);
  CHECK(c.usd == Approx(0.42));
  CHECK_FALSE(c.estimated);
  CHECK(c.known);
  const Cost zero = ComputeCost(0.0, usage, PriceTable{});
  CHECK(zero.usd == 0);
  CHECK_FALSE(zero.estimated);
  CHECK(zero.known);
}

TEST_CASE("ComputeCost: estimated from usage and prices", "[failure]") {
  const PriceTable prices{3.0, 15.0, 0.3};
  const Cost c = ComputeCost(std::nullopt, Usage{200000, 10000, 1000000}, prices);
  CHECK(c.usd == Approx(0.6 + 0.15 + 0.3));
  CHECK(c.estimated);
  CHECK(c.known);
  // Invalid reported values fall back to the estimate.
  CHECK(ComputeCost(-1.0, Usage{1000000, 0, 0}, prices).usd == Approx(3.0));
  CHECK(ComputeCost(std::numeric_limits<double>::quiet_NaN(), Usage{1000000, 0, 0}, prices)
            .estimated);
  // Negative token counts count as zero.
  CHECK(ComputeCost(std::nullopt, Usage{-5, 1000000, 0}, prices).usd == Approx(15.0));
}

TEST_CASE("ComputeCost: unknown when there are no prices but there is usage", "[failure]") {
  const Cost unknown = ComputeCost(std::nullopt, Usage{100, 50, 0}, PriceTable{});
  CHECK(unknown.usd == 0);
  CHECK(unknown.estimated);
  CHECK_FALSE(unknown.known);
  const Cost nothing = ComputeCost(std::nullopt, Usage{}, PriceTable{});
  CHECK(nothing.usd == 0);
  CHECK(nothing.estimated);
  CHECK(nothing.known);
  const Cost nothing_priced = ComputeCost(std::nullopt, Usage{}, PriceTable{3, 15, 0.3});
  CHECK(nothing_priced.usd == 0);
  CHECK(nothing_priced.known);
}

TEST_CASE("ParsePriceTable reads the three keys — a bad table names the key", "[failure]") {
  auto full = ParsePriceTable(nlohmann::json::parse(
      R"({"input_per_mtok": 3, "output_per_mtok": 15.5, "cache_read_per_mtok": 0.3, "x": 1})"));
  REQUIRE(full.ok());
  CHECK(full->input_per_mtok == 3.0);
  CHECK(full->output_per_mtok == 15.5);
  CHECK(full->cache_read_per_mtok == Approx(0.3));
  auto partial =
      ParsePriceTable(nlohmann::json::parse(R"({"output_per_mtok": 2, "input_per_mtok": null})"));
  REQUIRE(partial.ok());
  CHECK(partial->input_per_mtok == 0);
  CHECK(partial->output_per_mtok == 2.0);
  CHECK(partial->cache_read_per_mtok == 0);
  auto none = ParsePriceTable(nlohmann::json());
  REQUIRE(none.ok());
  CHECK(none->input_per_mtok == 0);
  CHECK(ParsePriceTable(nlohmann::json::object())->output_per_mtok == 0);

  auto text = ParsePriceTable(nlohmann::json::parse(R"({"input_per_mtok": "3"})"));
  CHECK(text.status().code() == Code::kInvalidArgument);
  CHECK(text.status().message() == "price.input_per_mtok: not a number");
  auto negative = ParsePriceTable(nlohmann::json::parse(R"({"output_per_mtok": -1})"));
  CHECK(negative.status().message() == "price.output_per_mtok: must be a number >= 0");
  CHECK_FALSE(ParsePriceTable(nlohmann::json::parse("[1, 2, 3]")).ok());
  CHECK_FALSE(ParsePriceTable(nlohmann::json(4)).ok());
}

using Caps = std::vector<std::tuple<std::string, double, double>>;

TEST_CASE("CheckCaps: passes under every cap and ignores absent caps", "[failure]") {
  CHECK(CheckCaps({}, 100).ok);
  const BudgetCheck ok = CheckCaps(Caps{{"dispatch", 1.0, 0.0},
                                        {"task", 5.0, 2.0},
                                        {"session", 0.0, 999.0},
                                        {"family_day", -1.0, 50.0}},
                                   0.5);
  CHECK(ok.ok);
  CHECK(ok.cap_name.empty());
  // Reaching a cap exactly is allowed, despite binary rounding (0.1 + 0.2 vs 0.3).
  CHECK(CheckCaps(Caps{{"task", 1.0, 0.6}}, 0.4).ok);
  CHECK(CheckCaps(Caps{{"task", 0.3, 0.1}}, 0.2).ok);
}

TEST_CASE("CheckCaps: refuses on the first cap that would be exceeded", "[failure]") {
  const BudgetCheck over =
      CheckCaps(Caps{{"dispatch", 1.0, 0.0}, {"task", 5.0, 4.8}, {"session", 5.0, 4.9}}, 0.5);
  CHECK_FALSE(over.ok);
  CHECK(over.cap_name == "task");
  CHECK(over.cap == 5.0);
  CHECK(over.spent == 4.8);

  // Already at the cap: refused even with a zero estimate.
  const BudgetCheck at = CheckCaps(Caps{{"session", 10.0, 10.0}}, 0.0);
  CHECK_FALSE(at.ok);
  CHECK(at.cap_name == "session");
  CHECK_FALSE(CheckCaps(Caps{{"session", 10.0, 12.0}}, 0.0).ok);
  // Negative or NaN estimates count as zero.
  CHECK(CheckCaps(Caps{{"task", 1.0, 0.5}}, -3.0).ok);
  CHECK(CheckCaps(Caps{{"task", 1.0, 0.5}}, std::numeric_limits<double>::quiet_NaN()).ok);
  CHECK_FALSE(CheckCaps(Caps{{"task", 1.0, 1.0}}, -3.0).ok);
  // Just over by more than the slack is refused.
  CHECK_FALSE(CheckCaps(Caps{{"task", 1.0, 0.6}}, 0.4001).ok);
  // An absent cap before a binding one is skipped.
  const BudgetCheck skip =
      CheckCaps(Caps{{"dispatch", 0.0, 0.0}, {"family_day", 20.0, 19.99}}, 0.02);
  CHECK_FALSE(skip.ok);
  CHECK(skip.cap_name == "family_day");
}

}  // namespace
}  // namespace conclave::domain
