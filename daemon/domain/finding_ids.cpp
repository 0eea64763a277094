// Contract: see finding_ids.h.
#include "domain/finding_ids.h"

#include <algorithm>

namespace conclave::domain {
namespace {

bool IdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

std::string Local(const std::string& id) {
  std::string out;
  for (char c : id.substr(0, 64)) out += IdChar(c) ? c : '_';
  return out.empty() ? "F" : out;
}

std::vector<std::string> Known(const Finding& f, const std::set<std::string>& known) {
  if (known.count(f.id)) return {f.id};
  std::vector<std::string> out;
  for (const std::string& ref : f.refs) {
    if (known.count(ref) && std::find(out.begin(), out.end(), ref) == out.end()) out.push_back(ref);
  }
  return out;
}

}  // namespace

std::string FindingIdPrefix(int ordinal, std::string_view family) {
  std::string fam;
  for (char c : family) {
    char l = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '_' || l == '-') fam += l;
  }
  if (fam.empty()) fam = "unknown";
  return "r" + std::to_string(ordinal) + "." + fam + ".";
}

std::vector<Finding> NamespaceFindings(int ordinal, std::string_view family,
                                       const std::vector<Finding>& answer,
                                       const std::set<std::string>& known_ids) {
  const std::string prefix = FindingIdPrefix(ordinal, family);
  std::vector<Finding> out;
  std::set<std::string> used;
  auto add_new = [&](Finding f) {
    std::string id = prefix + Local(f.id);
    for (int n = 2; used.count(id) || known_ids.count(id); ++n) {
      id = prefix + Local(f.id) + "-" + std::to_string(n);
    }
    used.insert(id);
    f.id = id;
    f.stance = Stance::kNew;
    std::vector<std::string> refs;
    for (const auto& r : f.refs) {
      if (known_ids.count(r)) refs.push_back(r);
    }
    f.refs = refs;
    out.push_back(std::move(f));
  };
  for (const Finding& f : answer) {
    if (f.stance == Stance::kNew) {
      add_new(f);
      continue;
    }
    std::vector<std::string> targets = Known(f, known_ids);
    if (targets.empty()) {
      if (f.stance == Stance::kWithdraw || f.stance == Stance::kFixed) continue;
      add_new(f);  // a reused bare id is a finding of its own
      continue;
    }
    for (const std::string& target : targets) {
      Finding response = f;
      response.id = target;
      response.refs.clear();
      for (const auto& r : f.refs) {
        if (known_ids.count(r)) response.refs.push_back(r);
      }
      out.push_back(std::move(response));
    }
  }
  return out;
}

}  // namespace conclave::domain
