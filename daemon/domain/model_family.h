// Families tell the truth (issue 12 item 6): a profile's family is its model vendor's family.
// For CLIs that can run several vendors' models (opencode, the claude CLI on another endpoint)
// the family is derived at dispatch time from the resolved model name through one prefix
// table: claude-/sonnet/opus/haiku → anthropic, gpt-/o1/o3/o4/codex- → openai, deepseek →
// deepseek, glm/chatglm → zhipu, qwen/qwq → alibaba, kimi/moonshot → moonshot, gemini/gemma →
// google. A provider prefix ("conclave/kimi-k3", "openrouter/openai/gpt-5.5") is dropped and
// case is ignored. EffectiveFamily compares it with the declared family:
//   unknown name      → the declared family stands, with a warning (`conclave doctor`);
//   known, same      → the declared family;
//   known, different → the derived family (a reviewer is judged by what it really runs).
// Pure, thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace conclave::domain {

// The family of a model name, nullopt when no prefix of the table matches.
std::optional<std::string> FamilyOfModel(std::string_view model);

struct FamilyCheck {
  std::string family;   // the one to use
  std::string model;    // the resolved model name ("" when none was found)
  bool known = false;   // the model name is in the table
  bool mismatch = false;  // known, and not the declared family
  std::string warning;  // for doctor: unknown name or mismatch ("" when neither)
};

FamilyCheck EffectiveFamily(std::string_view declared, std::string_view model);

}  // namespace conclave::domain
