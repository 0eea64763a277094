#include "exec/cost_probe.h"

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "exec/parser_support.h"

namespace conclave::exec {
namespace {
constexpr size_t kMaxPartial = 1 << 20;

std::optional<double> BoundedNumber(std::string_view text) {
  std::string s(text.substr(0, 64));
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}
}  // namespace

std::optional<double> CostFromLine(std::string_view line) {
  constexpr std::string_view kPlain = "conclave-cost-usd:";
  if (line.substr(0, kPlain.size()) == kPlain) return BoundedNumber(line.substr(kPlain.size()));
  if (line.empty() || line[0] != '{' || line.find("cost_usd") == std::string_view::npos) {
    return std::nullopt;
  }
  auto j = parser_detail::ParseJson(line);  // depth-limited: worker output
  if (!j.is_object()) return std::nullopt;
  std::optional<double> cost;
  for (const char* k : {"total_cost_usd", "cost_usd"}) {
    if (j.contains(k) && j[k].is_number()) {
      double v = j[k].get<double>();
      if (std::isfinite(v) && v >= 0) cost = v;
    }
  }
  return cost;
}

std::optional<double> CostProbe::Feed(std::string_view chunk) {
  partial_.append(chunk);
  if (partial_.size() > kMaxPartial) partial_.erase(0, partial_.size() - kMaxPartial);
  std::optional<double> seen;
  size_t start = 0, nl;
  while ((nl = partial_.find('\n', start)) != std::string::npos) {
    if (auto c = CostFromLine(std::string_view(partial_).substr(start, nl - start))) seen = c;
    start = nl + 1;
  }
  partial_.erase(0, start);
  if (seen) latest_ = *seen;
  return seen;
}

}  // namespace conclave::exec
