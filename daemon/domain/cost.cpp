// Contract: see cost.h.
#include "domain/cost.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace conclave::domain {
namespace {

constexpr double kTokensPerMillion = 1e6;
constexpr double kSlackUsd = 1e-9;

double Tokens(int64_t n) { return static_cast<double>(std::max<int64_t>(n, 0)); }

double ReadPrice(const nlohmann::json& json, const char* key) {
  const auto it = json.find(key);
  if (it == json.end() || it->is_null()) return 0;
  if (!it->is_number()) {
    throw std::invalid_argument(std::string("price table: ") + key + " is not a number");
  }
  const double value = it->get<double>();
  if (!std::isfinite(value) || value < 0) {
    throw std::invalid_argument(std::string("price table: ") + key + " must be >= 0");
  }
  return value;
}

}  // namespace

Cost ComputeCost(std::optional<double> reported_usd, const Usage& usage, const PriceTable& prices) {
  if (reported_usd && std::isfinite(*reported_usd) && *reported_usd >= 0) {
    return Cost{*reported_usd, false, true};
  }
  const bool no_prices =
      prices.input_per_mtok == 0 && prices.output_per_mtok == 0 && prices.cache_read_per_mtok == 0;
  const bool no_usage = Tokens(usage.input_tokens) == 0 && Tokens(usage.output_tokens) == 0 &&
                        Tokens(usage.cache_read_tokens) == 0;
  const double usd = (Tokens(usage.input_tokens) * prices.input_per_mtok +
                      Tokens(usage.output_tokens) * prices.output_per_mtok +
                      Tokens(usage.cache_read_tokens) * prices.cache_read_per_mtok) /
                     kTokensPerMillion;
  return Cost{usd, true, !(no_prices && !no_usage)};
}

PriceTable ParsePriceTable(const nlohmann::json& json) {
  if (json.is_null()) return PriceTable{};
  if (!json.is_object()) throw std::invalid_argument("price table: not a JSON object");
  return PriceTable{ReadPrice(json, "input_per_mtok"), ReadPrice(json, "output_per_mtok"),
                    ReadPrice(json, "cache_read_per_mtok")};
}

BudgetCheck CheckCaps(const std::vector<std::tuple<std::string, double, double>>& caps,
                      double next_estimate) {
  const double estimate = next_estimate > 0 ? next_estimate : 0;  // NaN -> 0.
  for (const auto& [name, cap, spent] : caps) {
    if (!(cap > 0)) continue;
    if (spent >= cap - kSlackUsd || spent + estimate > cap + kSlackUsd) {
      return BudgetCheck{false, name, cap, spent};
    }
  }
  return BudgetCheck{};
}

}  // namespace conclave::domain
