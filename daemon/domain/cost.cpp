// Contract: see cost.h.
#include "domain/cost.h"

#include <algorithm>
#include <cmath>

namespace conclave::domain {
namespace {

constexpr double kTokensPerMillion = 1e6;
constexpr double kSlackUsd = 1e-9;

double Tokens(int64_t n) { return static_cast<double>(std::max<int64_t>(n, 0)); }

Status ReadPrice(const nlohmann::json& json, const char* key, double* out) {
  *out = 0;
  const auto it = json.find(key);
  if (it == json.end() || it->is_null()) return Status::Ok();
  if (!it->is_number()) return InvalidArgument(std::string("price.") + key + ": not a number");
  const double value = it->get<double>();
  if (!std::isfinite(value) || value < 0) {
    return InvalidArgument(std::string("price.") + key + ": must be a number >= 0");
  }
  *out = value;
  return Status::Ok();
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

StatusOr<PriceTable> ParsePriceTable(const nlohmann::json& json) {
  if (json.is_null()) return PriceTable{};
  if (!json.is_object()) return InvalidArgument("price: must be a JSON object");
  PriceTable t;
  for (auto [key, out] : {std::pair{"input_per_mtok", &t.input_per_mtok},
                          std::pair{"output_per_mtok", &t.output_per_mtok},
                          std::pair{"cache_read_per_mtok", &t.cache_read_per_mtok}}) {
    if (Status s = ReadPrice(json, key, out); !s.ok()) return s;
  }
  return t;
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
