// Unit tests: profiles and template resolution (exec/profile): per-field errors, the reviewer
// fields (schema_args, readonly_args), large briefs (brief_large), nested template defaults,
// and the shipped profiles themselves.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "exec/output_parser.h"
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

namespace {
json Base() {
  return {{"name", "p"}, {"family", "f"}, {"command", {"cli"}}, {"parser", "text"}};
}
StatusOr<exec::Profile> Parse(const json& j, std::string* field) {
  return exec::ParseProfile(j, "p.json", field);
}
}  // namespace

TEST_CASE("schema_args and readonly_args load as string arrays, named on error", "[profile]") {
  json j = Base();
  j["schema_args"] = {"--json-schema", "${findings_schema}"};
  j["readonly_args"] = {"--sandbox", "read-only"};
  j["review_args"] = {"--legacy"};
  std::string field;
  auto p = Parse(j, &field);
  REQUIRE(p.ok());
  CHECK(p->schema_args == std::vector<std::string>{"--json-schema", "${findings_schema}"});
  CHECK(p->readonly_args == std::vector<std::string>{"--sandbox", "read-only"});
  CHECK(p->review_args == std::vector<std::string>{"--legacy"});  // still loaded
  for (const char* key : {"schema_args", "readonly_args"}) {
    json bad = Base();
    bad[key] = {"--x", 3};
    field.clear();
    auto r = Parse(bad, &field);
    CHECK(!r.ok());
    CHECK(field == key);
    CHECK(r.status().message().find(key) != std::string::npos);
  }
}

TEST_CASE("brief_large: how an over-long argument brief is delivered", "[profile]") {
  std::string field;
  json arg = Base();
  arg["brief"] = "arg";
  auto none = Parse(arg, &field);
  REQUIRE(none.ok());
  CHECK(*exec::PlanBriefDelivery(*none, 10) == exec::BriefDelivery::kArg);
  auto too_big = exec::PlanBriefDelivery(*none, exec::kMaxArgBriefBytes + 1);
  REQUIRE(!too_big.ok());
  CHECK(too_big.status().message().find("brief_large") != std::string::npos);

  json via_stdin = arg;
  via_stdin["brief_large"] = "stdin";
  auto s = Parse(via_stdin, &field);
  REQUIRE(s.ok());
  CHECK(*exec::PlanBriefDelivery(*s, exec::kMaxArgBriefBytes) == exec::BriefDelivery::kArg);
  CHECK(*exec::PlanBriefDelivery(*s, 300 * 1024) == exec::BriefDelivery::kStdin);

  json via_file = arg;
  via_file["brief_large"] = "args";
  via_file["brief_large_args"] = {"--prompt-file", "${BRIEF_FILE}"};
  auto f = Parse(via_file, &field);
  REQUIRE(f.ok());
  CHECK(*exec::PlanBriefDelivery(*f, 300 * 1024) == exec::BriefDelivery::kLargeArgs);

  json stdin_profile = Base();
  CHECK(*exec::PlanBriefDelivery(*Parse(stdin_profile, &field), 1 << 30) ==
        exec::BriefDelivery::kStdin);

  for (auto [key, value, base_brief] : std::vector<std::tuple<std::string, json, std::string>>{
           {"brief_large", "pipe", "arg"},
           {"brief_large", "stdin", "stdin"},  // only for "arg" briefs
           {"brief_large_args", json::array({"--f", "${BRIEF_FILE}"}), "arg"}}) {
    json bad = Base();
    bad["brief"] = base_brief;
    bad[key] = value;
    field.clear();
    INFO(key << " " << value.dump());
    CHECK(!Parse(bad, &field).ok());
    CHECK(field == key);
  }
  json no_file = arg;
  no_file["brief_large"] = "args";
  no_file["brief_large_args"] = {"--prompt-file", "brief.txt"};
  field.clear();
  CHECK(!Parse(no_file, &field).ok());
  CHECK(field == "brief_large_args");
}

TEST_CASE("a template default may hold references", "[profile]") {
  std::map<std::string, std::string> env = {{"SET", "/shared"}};
  exec::TemplateContext ctx;
  ctx.environ = &env;
  ctx.vars["HOME"] = "/h";
  CHECK(exec::ResolveTemplate("${env:UNSET:-${HOME}/.cache}", "X", ctx)->value == "/h/.cache");
  CHECK(exec::ResolveTemplate("${env:SET:-${HOME}/.cache}", "X", ctx)->value == "/shared");
  CHECK(exec::ResolveTemplate("a${env:U1:-${env:U2:-z}}b", "X", ctx)->value == "azb");
  CHECK(!exec::ResolveTemplate("${env:UNSET:-${NOPE}}", "X", ctx).ok());
  CHECK(!exec::ResolveTemplate("${env:UNSET:-${HOME}", "X", ctx).ok());  // unterminated
}

TEST_CASE("the shipped profiles load, stream, and carry no schema copy", "[profile]") {
  auto set = exec::LoadProfiles(std::string(CONCLAVE_SOURCE_DIR) + "/profiles");
  for (const auto& e : set.errors) INFO(e.file << " " << e.field << " " << e.error);
  CHECK(set.errors.empty());
  REQUIRE(set.profiles.size() >= 9);
  for (const auto& p : set.profiles) {
    INFO(p.name);
    CHECK(exec::IsKnownParser(p.parser));
    CHECK(p.brief == "stdin");  // every shipped CLI takes a brief of any size on stdin
    if (p.type != "cli") continue;
    CHECK(p.parser != "claude-json");  // streaming formats only (issue 11)
    CHECK(p.parser != "qwen-json");
    CHECK(p.parser != "gemini-json");
    CHECK_FALSE(p.readonly_args.empty());
    CHECK(p.review_args.empty());
    for (const auto& a : p.schema_args) {
      // Only a template reference: the schema itself comes from the daemon.
      bool reference_only = a.find("findings") == std::string::npos || a.find("${findings_schema") == 0;
      CHECK(reference_only);
    }
  }
  for (const char* name : {"claude", "deepseek-flash", "glm", "kimi", "qwen"}) {
    const auto* p = set.Find(name);
    REQUIRE(p);
    CHECK(p->schema_args == std::vector<std::string>{"--json-schema", "${findings_schema}"});
  }
  REQUIRE(set.Find("codex"));
  CHECK(set.Find("codex")->schema_args ==
        std::vector<std::string>{"--output-schema", "${findings_schema_file}"});
  const auto& codex_cmd = set.Find("codex")->command;
  CHECK(std::find(codex_cmd.begin(), codex_cmd.end(),
                  "--dangerously-bypass-approvals-and-sandbox") == codex_cmd.end());
}

namespace {

// An integer beyond int's range was narrowed (4294967297 became 1) and accepted.
TEST_CASE("profile: an integer limit out of int's range names its field", "[exec][fuzz]") {
  std::string field;
  auto p = exec::LoadProfileFromJson(
      R"({"name":"p","family":"f","command":["x"],"timeout_s":4294967297})", "p.json", &field);
  REQUIRE_FALSE(p.ok());
  CHECK(field == "timeout_s");
  auto q = exec::LoadProfileFromJson(
      R"({"name":"p","family":"f","command":["x"],"max_concurrent":-9223372036854775808})",
      "p.json", &field);
  REQUIRE_FALSE(q.ok());
  CHECK(field == "max_concurrent");
  auto r = exec::LoadProfileFromJson("{not json", "p.json", &field);
  REQUIRE_FALSE(r.ok());
  CHECK(field.empty());
}

}  // namespace
