// Contract: see carry_over.h.
#include "domain/carry_over.h"

#include "domain/family.h"

namespace conclave::domain {

std::vector<Finding> TakeCarriedAnswers(const std::vector<Finding>& findings,
                                        const std::string& family,
                                        const std::set<std::string>& carried_ids,
                                        std::vector<CarriedAnswer>* answers) {
  std::vector<Finding> rest;
  for (const Finding& f : findings) {
    if (carried_ids.count(f.id)) {
      answers->push_back({family, f});
    } else {
      rest.push_back(f);
    }
  }
  return rest;
}

std::vector<ReconciledFinding> ApplyCarriedAnswers(std::vector<ReconciledFinding> carried,
                                                   const std::vector<CarriedAnswer>& answers) {
  for (ReconciledFinding& c : carried) {
    c.carried = true;
    std::optional<Stance> own;
    for (const CarriedAnswer& a : answers) {
      if (a.entry.id != c.finding.id) continue;
      c.answers.push_back(a.family + ":" + std::string(StanceName(a.entry.stance)));
      if (SameFamily(a.family, c.family)) own = a.entry.stance;
    }
    if (own && (*own == Stance::kWithdraw || *own == Stance::kFixed)) c.open = false;
  }
  return carried;
}

std::vector<ReconciledFinding> OpenForeign(const std::vector<ReconciledFinding>& findings) {
  std::vector<ReconciledFinding> out;
  for (const ReconciledFinding& f : findings) {
    if (f.open && f.from_foreign) out.push_back(f);
  }
  return out;
}

std::set<std::string> IdsOf(const std::vector<ReconciledFinding>& findings) {
  std::set<std::string> ids;
  for (const auto& f : findings) ids.insert(f.finding.id);
  return ids;
}

nlohmann::json ReconciledToJson(const ReconciledFinding& f) {
  nlohmann::json j = FindingToJson(f.finding);
  j["family"] = f.family;
  j["round"] = f.round;
  j["foreign"] = f.from_foreign;
  j["disposition"] = f.disposition;
  j["open"] = f.open;
  j["profile"] = f.profile;
  j["role"] = f.role;
  j["revision"] = f.revision;
  j["carried"] = f.carried;
  j["answers"] = f.answers;
  return j;
}

std::optional<ReconciledFinding> ReconciledFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  auto parsed = ParseFindingsJson({{"findings", nlohmann::json::array({j})}});
  if (!parsed.ok || parsed.findings.size() != 1) return std::nullopt;
  ReconciledFinding f;
  f.finding = parsed.findings[0];
  auto text = [&](const char* k) {
    auto it = j.find(k);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto number = [&](const char* k) {
    auto it = j.find(k);
    return it != j.end() && it->is_number_integer() ? it->get<int>() : 0;
  };
  auto flag = [&](const char* k, bool fallback) {
    auto it = j.find(k);
    return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
  };
  f.family = text("family");
  f.round = number("round");
  f.from_foreign = flag("foreign", true);  // unknown provenance counts as foreign (fail closed)
  f.disposition = text("disposition");
  f.open = flag("open", true);
  f.profile = text("profile");
  f.role = text("role");
  f.revision = number("revision");
  f.carried = flag("carried", false);
  if (auto it = j.find("answers"); it != j.end() && it->is_array()) {
    for (const auto& a : *it) {
      if (a.is_string()) f.answers.push_back(a.get<std::string>());
    }
  }
  return f;
}

nlohmann::json ReconciledListToJson(const std::vector<ReconciledFinding>& list) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : list) out.push_back(ReconciledToJson(f));
  return out;
}

std::vector<ReconciledFinding> ReconciledListFromText(const std::string& text) {
  std::vector<ReconciledFinding> out;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& e : j) {
    if (auto f = ReconciledFromJson(e)) out.push_back(std::move(*f));
  }
  return out;
}

}  // namespace conclave::domain
