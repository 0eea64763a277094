// Contract: see model_family.h.
#include "domain/model_family.h"

#include <array>
#include <utility>

#include "domain/family.h"

namespace conclave::domain {
namespace {

// Longest prefixes first where one is a prefix of another ("o1" before "o").
constexpr std::array<std::pair<std::string_view, std::string_view>, 21> kPrefixes = {{
    {"claude", "anthropic"},  {"sonnet", "anthropic"}, {"opus", "anthropic"},
    {"haiku", "anthropic"},   {"gpt", "openai"},       {"chatgpt", "openai"},
    {"codex-", "openai"},     {"o1", "openai"},        {"o3", "openai"},
    {"o4", "openai"},         {"deepseek", "deepseek"}, {"glm", "zhipu"},
    {"chatglm", "zhipu"},     {"qwen", "alibaba"},     {"qwq", "alibaba"},
    {"kimi", "moonshot"},     {"moonshot", "moonshot"}, {"gemini", "google"},
    {"gemma", "google"},      {"o5", "openai"},        {"davinci", "openai"},
}};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  return out;
}

}  // namespace

std::optional<std::string> FamilyOfModel(std::string_view model) {
  std::string name = Lower(model);
  while (!name.empty() && (name.back() == ' ' || name.back() == '\n')) name.pop_back();
  if (auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  for (const auto& [prefix, family] : kPrefixes) {
    if (name.rfind(prefix, 0) != 0) continue;
    // "o1"/"o3"... must be followed by a separator or the end ("o1-mini", "o3"), so that
    // "opus" or "ollama" are not read as openai.
    if (prefix.size() == 2 && prefix[0] == 'o' && name.size() > 2 && name[2] != '-' &&
        name[2] != '.' && name[2] != '_') {
      continue;
    }
    return std::string(family);
  }
  return std::nullopt;
}

FamilyCheck EffectiveFamily(std::string_view declared, std::string_view model) {
  FamilyCheck c;
  c.family = std::string(declared);
  c.model = std::string(model);
  if (model.empty()) return c;
  auto derived = FamilyOfModel(model);
  if (!derived) {
    c.warning = "model '" + c.model + "' is not in the family table; the declared family '" +
                c.family + "' is trusted";
    return c;
  }
  c.known = true;
  if (SameFamily(*derived, declared)) return c;
  c.mismatch = true;
  c.warning = "declared family '" + c.family + "' but model '" + c.model + "' is " + *derived +
              "'s: reviews treat it as " + *derived;
  c.family = *derived;
  return c;
}

}  // namespace conclave::domain
