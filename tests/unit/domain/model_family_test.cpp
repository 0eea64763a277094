// Families tell the truth: the family of a multi-vendor CLI comes from its model name.
#include <catch2/catch.hpp>

#include "domain/model_family.h"

namespace conclave::domain {
namespace {

TEST_CASE("model family: the prefix table", "[review][family]") {
  struct Row {
    const char* model;
    const char* family;
  };
  for (const Row& r : std::vector<Row>{{"claude-sonnet-4-5", "anthropic"}, {"sonnet", "anthropic"},
                                       {"opus", "anthropic"}, {"gpt-5.5", "openai"},
                                       {"o3", "openai"}, {"o4-mini", "openai"},
                                       {"codex-mini-latest", "openai"},
                                       {"deepseek-v4-flash", "deepseek"}, {"glm-5.2", "zhipu"},
                                       {"qwen3-coder-plus", "alibaba"}, {"kimi-k3", "moonshot"},
                                       {"moonshot-v1-128k", "moonshot"},
                                       {"gemini-2.5-pro", "google"},
                                       {"conclave/kimi-k3", "moonshot"},
                                       {"openrouter/openai/GPT-5.5", "openai"}}) {
    INFO(r.model);
    CHECK(FamilyOfModel(r.model) == std::optional<std::string>(r.family));
  }
  CHECK_FALSE(FamilyOfModel("llama-3-70b").has_value());
  CHECK_FALSE(FamilyOfModel("ollama-thing").has_value());  // "o" + letter is not o-series
  CHECK_FALSE(FamilyOfModel("").has_value());
}

TEST_CASE("model family: unknown keeps the declared family with a warning, a mismatch wins",
          "[review][family]") {
  auto unknown = EffectiveFamily("local", "my-model");
  CHECK(unknown.family == "local");
  CHECK_FALSE(unknown.known);
  CHECK_THAT(unknown.warning, Catch::Contains("not in the family table"));
  auto same = EffectiveFamily("moonshot", "kimi-k3");
  CHECK(same.family == "moonshot");
  CHECK(same.warning.empty());
  auto lie = EffectiveFamily("opencode", "kimi-k3");  // the old shipped opencode profile
  CHECK(lie.family == "moonshot");
  CHECK(lie.mismatch);
  CHECK_THAT(lie.warning, Catch::Contains("opencode") && Catch::Contains("moonshot"));
  auto none = EffectiveFamily("anthropic", "");
  CHECK(none.family == "anthropic");
  CHECK(none.warning.empty());
}

}  // namespace
}  // namespace conclave::domain
