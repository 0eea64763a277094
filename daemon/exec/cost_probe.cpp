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
  // Each byte is looked at once: only the new chunk is searched for line ends, and a line is
  // copied only when it spans chunks. A line longer than 1 MiB reports no cost: it is dropped
  // up to its end instead of being kept and re-scanned with every chunk.
  std::optional<double> seen;
  while (!chunk.empty()) {
    size_t nl = chunk.find('\n');
    std::string_view piece = chunk.substr(0, nl);
    if (nl != std::string_view::npos && partial_.empty() && !overlong_) {
      // A whole line inside the chunk: no copy.
      if (piece.size() <= kMaxPartial) {
        if (auto c = CostFromLine(piece)) seen = c;
      }
    } else if (!overlong_) {
      if (partial_.size() + piece.size() > kMaxPartial) {
        overlong_ = true;
        std::string().swap(partial_);
      } else {
        partial_.append(piece);
        if (nl != std::string_view::npos) {
          if (auto c = CostFromLine(partial_)) seen = c;
        }
      }
    }
    if (nl == std::string_view::npos) break;
    partial_.clear();
    overlong_ = false;
    chunk.remove_prefix(nl + 1);
  }
  if (seen) latest_ = *seen;
  return seen;
}

}  // namespace conclave::exec
