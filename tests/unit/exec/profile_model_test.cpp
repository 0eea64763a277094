// Unit tests: the model a profile resolves to (exec/profile_model) — from argv, env or a
// generated config file — and the shipped profiles' families checked against it.
#include <catch2/catch.hpp>

#include "domain/model_family.h"
#include "exec/profile.h"
#include "exec/profile_model.h"

using namespace conclave;

namespace {

TEST_CASE("model name from argv, env, then config files, with env defaults", "[exec][family]") {
  exec::Profile p;
  p.command = {"claude", "-p", "--model", "${env:X_MODEL:-glm-5.2}"};
  std::map<std::string, std::string> env;
  CHECK(exec::ResolveModelName(p, env) == "glm-5.2");
  env["X_MODEL"] = "kimi-k3";
  CHECK(exec::ResolveModelName(p, env) == "kimi-k3");
  p.command = {"qwen"};
  p.env = {{"OPENAI_MODEL", "qwen3-coder-plus"}};
  CHECK(exec::ResolveModelName(p, env) == "qwen3-coder-plus");
  p.env.clear();
  p.files = {{"${HOME}/.config/x.json", "{\n \"small_model\": \"a\",\n \"model\": \"conclave/${env:M:-kimi-k3}\"\n}"}};
  CHECK(exec::ResolveModelName(p, env) == "conclave/kimi-k3");
  p.files = {{"${HOME}/.codex/config.toml", "model = \"${env:M:-gpt-5.5}\"\nkey = \"${env:UNSET}\"\n"}};
  CHECK(exec::ResolveModelName(p, env) == "gpt-5.5");
  p.files.clear();
  CHECK(exec::ResolveModelName(p, env).empty());
}

TEST_CASE("every shipped CLI profile's family is its model's family", "[exec][family]") {
  auto set = exec::LoadProfiles(std::string(CONCLAVE_SOURCE_DIR) + "/profiles");
  REQUIRE(set.errors.empty());
  const std::map<std::string, std::string> env;  // the defaults of every ${env:...:-...}
  int checked = 0;
  for (const auto& p : set.profiles) {
    if (p.type != "cli") continue;
    INFO(p.name);
    const std::string model = exec::ResolveModelName(p, env);
    auto check = domain::EffectiveFamily(p.family, model);
    CHECK_FALSE(check.mismatch);
    if (check.known) ++checked;
  }
  CHECK(checked >= 7);
  const exec::Profile* opencode = set.Find("opencode");
  REQUIRE(opencode);
  CHECK(opencode->family == "moonshot");  // its default model is Moonshot's kimi
}

}  // namespace
