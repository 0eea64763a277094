// Unit tests: profiles and template resolution (exec/profile).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "exec/profile.h"

using namespace conclave;
using json = nlohmann::json;

namespace {

TEST_CASE("profile parsing reports the bad field", "[exec]") {
  json good = {{"name", "deepseek-flash"}, {"family", "deepseek"},
               {"command", {"claude", "-p"}}, {"brief", "stdin"}, {"parser", "claude-json"},
               {"env", {{"ANTHROPIC_AUTH_TOKEN", "${env:DEEPSEEK_API_KEY}"}}},
               {"timeout_s", 1800}, {"idle_timeout_s", 300}, {"max_concurrent", 2}};
  std::string field;
  auto p = exec::ParseProfile(good, "f.json", &field);
  REQUIRE(p.ok());
  CHECK(p->max_concurrent == 2);
  CHECK(p->env.at("ANTHROPIC_AUTH_TOKEN") == "${env:DEEPSEEK_API_KEY}");
  for (auto [key, value] : std::vector<std::pair<std::string, json>>{
           {"brief", "pipe"}, {"timeout_s", 0}, {"command", json::array()}, {"env", {{"A", 1}}},
           {"max_concurrent", "two"}, {"name", "bad name"}, {"type", "shell"}}) {
    json bad = good;
    bad[key] = value;
    field.clear();
    auto r = exec::ParseProfile(bad, "f.json", &field);
    INFO(key);
    CHECK(!r.ok());
    CHECK(field == key);
  }
  json missing = good;
  missing.erase("family");
  CHECK(!exec::ParseProfile(missing, "f.json", &field).ok());
  CHECK(field == "family");
}

TEST_CASE("a profile directory loads the valid files and reports the others", "[exec]") {
  char t[] = "/tmp/cvpXXXXXX";
  std::string dir = mkdtemp(t);
  std::ofstream(dir + "/a.json") << R"({"name":"a","family":"f","command":["x"]})";
  std::ofstream(dir + "/b.json") << R"({"name":"b","family":"f"})";
  std::ofstream(dir + "/c.json") << "{";
  std::ofstream(dir + "/dup.json") << R"({"name":"a","family":"g","command":["y"]})";
  auto set = exec::LoadProfiles(dir);
  REQUIRE(set.profiles.size() == 1);
  CHECK(set.profiles[0].name == "a");
  CHECK(set.errors.size() == 3);
  std::filesystem::remove_all(dir);
}

TEST_CASE("templates resolve env, defaults, files and vars — credentials become secrets",
          "[exec]") {
  std::map<std::string, std::string> env = {{"DEEPSEEK_API_KEY", "sk-123456"}, {"BASE", "http://x"}};
  exec::TemplateContext ctx;
  ctx.environ = &env;
  ctx.vars["HOME"] = "/h";
  auto r = exec::ResolveTemplate("Bearer ${env:DEEPSEEK_API_KEY}", "ANTHROPIC_AUTH_TOKEN", ctx);
  REQUIRE(r.ok());
  CHECK(r->value == "Bearer sk-123456");
  CHECK(r->secrets == std::vector<std::string>{"sk-123456"});
  auto url = exec::ResolveTemplate("${env:BASE}/v1", "ANTHROPIC_BASE_URL", ctx);
  CHECK(url->value == "http://x/v1");
  CHECK(url->secrets.empty());
  auto def = exec::ResolveTemplate("${env:NOPE:-https://api.example}", "URL", ctx);
  CHECK(def->value == "https://api.example");
  auto missing = exec::ResolveTemplate("${env:NOPE}", "KEY", ctx);
  CHECK(!missing.ok());
  CHECK(missing.status().message().find("NOPE") != std::string::npos);
  CHECK(exec::ResolveTemplate("${HOME}/.codex", "p", ctx)->value == "/h/.codex");
  CHECK(!exec::ResolveTemplate("${WHAT}", "p", ctx).ok());
  CHECK(!exec::ResolveTemplate("${env:X", "p", ctx).ok());
}


TEST_CASE("a bad price table is a profile load error naming the key", "[exec]") {
  json p = {{"name", "x"}, {"family", "f"}, {"command", {"x"}},
            {"price", {{"input_per_mtok", "three dollars"}}}};
  std::string field;
  auto r = exec::ParseProfile(p, "x.json", &field);
  REQUIRE_FALSE(r.ok());
  CHECK(field == "price");
  CHECK(r.status().message() == "price.input_per_mtok: not a number");
  p["price"] = {{"input_per_mtok", 3}, {"output_per_mtok", 15}};
  auto ok = exec::ParseProfile(p, "x.json", &field);
  REQUIRE(ok.ok());
  CHECK(ok->price.output_per_mtok == 15);
}

}  // namespace
