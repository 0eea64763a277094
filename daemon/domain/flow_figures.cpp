#include "domain/flow_figures.h"

#include <map>

namespace conclave::domain {
namespace {

// Milliseconds spent in each step: from the move into it to the next move.
std::map<std::string, int64_t> StepTimes(const std::string& history) {
  std::map<std::string, int64_t> out;
  auto h = nlohmann::json::parse(history, nullptr, false);
  if (!h.is_array()) return out;
  for (size_t i = 0; i + 1 < h.size(); ++i) {
    const auto& a = h[i];
    const auto& b = h[i + 1];
    if (!a.is_object() || !b.is_object()) continue;
    int64_t from = a.value("at_ms", int64_t{0}), to = b.value("at_ms", int64_t{0});
    if (to >= from) out[a.value("step", std::string("?"))] += to - from;
  }
  return out;
}

nlohmann::json Rate(int64_t num, int64_t den, const char* of) {
  return {{"numerator", num}, {"denominator", den}, {"of", of},
          {"rate", den > 0 ? nlohmann::json(static_cast<double>(num) / den) : nlohmann::json()}};
}

}  // namespace

nlohmann::json FlowFigures(const std::vector<FlowFacts>& flows) {
  nlohmann::json per = nlohmann::json::array();
  std::map<std::string, int64_t> by_status, step_total;
  int64_t fix_rounds = 0, first_pass = 0, verified = 0;
  double cost = 0;
  for (const auto& f : flows) {
    auto steps = StepTimes(f.history);
    for (const auto& [s, ms] : steps) step_total[s] += ms;
    ++by_status[f.status];
    fix_rounds += f.fix_rounds;
    cost += f.cost_usd;
    if (f.first_pass_verify) {
      ++verified;
      first_pass += *f.first_pass_verify ? 1 : 0;
    }
    per.push_back({{"id", f.id},
                   {"status", f.status},
                   {"rounds", f.rounds},
                   {"fix_rounds", f.fix_rounds},
                   {"implement_runs", f.implement_runs},
                   {"verify_runs", f.verify_runs},
                   {"cost_usd", f.cost_usd},
                   {"step_ms", steps},
                   {"first_pass_verify", f.first_pass_verify ? nlohmann::json(*f.first_pass_verify)
                                                             : nlohmann::json()}});
  }
  const auto n = static_cast<int64_t>(flows.size());
  return {{"count", n},
          {"by_status", by_status},
          {"fix_rounds", {{"total", fix_rounds},
                          {"mean", n > 0 ? nlohmann::json(static_cast<double>(fix_rounds) / n)
                                         : nlohmann::json()},
                          {"of", "flows"}}},
          {"first_pass_verify", Rate(first_pass, verified, "flows whose first round ran verify")},
          {"step_ms_total", step_total},
          {"cost_usd", cost},
          {"per_flow", per}};
}

}  // namespace conclave::domain
