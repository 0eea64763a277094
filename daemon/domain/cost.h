// Contract: dispatch cost and budget caps (issue 4 "Budgets"). A cost reported by the CLI
// (e.g. total_cost_usd) wins; otherwise it is estimated from token usage and the profile's
// price table (USD per million tokens) and marked estimated. CheckCaps decides whether a
// next dispatch may start under a list of caps (per dispatch/task/session/family-day).
#ifndef CONCLAVE_DOMAIN_COST_H_
#define CONCLAVE_DOMAIN_COST_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common/status.h"

namespace conclave::domain {

struct PriceTable {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
  double cache_read_per_mtok = 0;
};

struct Usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cache_read_tokens = 0;
};

struct Cost {
  double usd = 0;
  bool estimated = false;
  bool known = false;  // False when usage was nonzero but there were no prices to apply.
};

// reported_usd (finite, >= 0) wins: {usd, estimated=false, known=true}. Otherwise the cost
// is estimated from usage (negative token counts count as 0): estimated=true, and
// known=false (usd 0) when the table is all zeros while usage is nonzero.
Cost ComputeCost(std::optional<double> reported_usd, const Usage& usage, const PriceTable& prices);

// Reads keys input_per_mtok, output_per_mtok, cache_read_per_mtok (missing or null = 0).
// A null document yields an all-zero table. INVALID_ARGUMENT naming the key when the
// document is neither null nor an object, or a present value is not a finite number >= 0.
// Runs once, when a profile loads: a bad table is a profile load error, never a silent $0.
StatusOr<PriceTable> ParsePriceTable(const nlohmann::json& json);

struct BudgetCheck {
  bool ok = true;
  std::string cap_name;  // The refusing cap; empty when ok.
  double cap = 0;
  double spent = 0;
};

// caps: (name, cap in USD (<= 0 or NaN = no cap), spent so far). Returns the first cap, in
// order, that refuses: spent >= cap, or spent + next_estimate > cap (a negative or NaN
// estimate counts as 0; comparisons allow 1e-9 USD of rounding slack, so spending up to
// exactly the cap is allowed and the next dispatch is then refused). ok=true otherwise.
BudgetCheck CheckCaps(const std::vector<std::tuple<std::string, double, double>>& caps,
                      double next_estimate);

}  // namespace conclave::domain

#endif  // CONCLAVE_DOMAIN_COST_H_
