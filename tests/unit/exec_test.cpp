// Unit tests: profiles (parsing, per-field errors, template resolution and secrets),
// streaming redaction, brief rendering, and the process helpers.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "domain/message.h"
#include "exec/brief_renderer.h"
#include "exec/child_process.h"
#include "exec/proc_info.h"
#include "exec/profile.h"
#include "exec/redactor.h"

using namespace conclave;
using json = nlohmann::json;

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

TEST_CASE("templates resolve env, defaults, files and vars; credentials become secrets",
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

TEST_CASE("streaming redaction catches secrets split across chunks", "[exec]") {
  std::string secret = "sk-SECRET-value";
  std::string text = "a" + secret + "b" + secret + secret + "c";
  for (size_t chunk = 1; chunk <= text.size(); ++chunk) {
    exec::StreamRedactor r({secret, "other-token"});
    std::string out;
    for (size_t i = 0; i < text.size(); i += chunk) out += r.Feed(text.substr(i, chunk));
    out += r.Finish();
    INFO(chunk);
    CHECK(out == "a[REDACTED]b[REDACTED][REDACTED]c");
  }
  CHECK(exec::RedactAll("no secrets here", {}) == "no secrets here");
}

TEST_CASE("streaming redaction holds back only what could start a secret", "[exec]") {
  exec::StreamRedactor r({"sk-SECRET-value"});
  CHECK(r.Feed("tick-1\n") == "tick-1\n");  // a live line goes out at once
  CHECK(r.Feed("key=sk-SE") == "key=");     // "sk-SE" may be a secret's start: held
  CHECK(r.Feed("CRET-value!") == "[REDACTED]!");
  CHECK(r.Feed("s") == "");      // "s" could start one too
  CHECK(r.Feed("o ") == "so ");  // "so " cannot
  CHECK(r.Finish().empty());
}

TEST_CASE("brief rendering: sections, template placeholders and the contract", "[exec]") {
  exec::BriefInput in;
  in.brief = "ROLE: writer\nTASK:\nfix the bug\nDONE: tests pass\n";
  in.hypothesis = "off by one";
  auto sections = exec::ParseBriefSections(in.brief);
  CHECK(sections["ROLE"] == "writer");
  CHECK(sections["TASK"] == "fix the bug");
  CHECK(sections["DONE"] == "tests pass");
  std::string r = exec::RenderTemplate("Goal: {{section:TASK}}\nDone: {{section:DONE}}\n{{contract}}", in);
  CHECK(r.find("Goal: fix the bug") == 0);
  CHECK(r.find("SUMMARY") != std::string::npos);
  std::string plain = exec::RenderBrief("/nonexistent", "", in);
  CHECK(plain.find("HYPOTHESIS: off by one") != std::string::npos);
  CHECK(plain.find("BLOCKERS") != std::string::npos);
}

TEST_CASE("spawned children get their own process group; start time identifies them",
          "[exec]") {
  exec::SpawnSpec spec;
  spec.argv = {"sleep", "5"};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.cwd = "/";
  auto c = exec::SpawnChild(spec);
  REQUIRE(c.ok());
  CHECK(getpgid(c->pid) == c->pid);
  CHECK(c->start_time > 0);
  CHECK(exec::SameProcess(c->pid, c->start_time));
  CHECK(!exec::SameProcess(c->pid, c->start_time + 1));  // a recycled pid never matches
  exec::SignalGroup(c->pid, SIGKILL);
  int st;
  waitpid(c->pid, &st, 0);
  CHECK(!exec::ProcessGroupAlive(c->pid));
  spec.argv = {"definitely-not-a-program-xyz"};
  auto missing = exec::SpawnChild(spec);
  CHECK(!missing.ok());
  CHECK(missing.status().message().find("not found") != std::string::npos);
}

TEST_CASE("handle names and message validation", "[exec]") {
  CHECK(domain::ValidateHandleName("worker-1.a_b:c", "h").ok());
  CHECK(!domain::ValidateHandleName("", "h").ok());
  CHECK(!domain::ValidateHandleName("@all", "h").ok());
  CHECK(!domain::ValidateHandleName("a b", "h").ok());
  CHECK(!domain::ValidateHandleName(std::string(65, 'a'), "h").ok());
  domain::MessageRecord m;
  m.type = "status";
  CHECK(domain::ValidateMessage(m).ok());
  m.payload = "[1,2";
  CHECK(domain::ValidateMessage(m).message().find("payload") != std::string::npos);
}

TEST_CASE("per-family brief templates keep each family's section order", "[exec]") {
  exec::BriefInput in;
  in.brief = "ROLE: worker\nSCOPE: src/parser\nMODE: implement\nTASK: fix the tokenizer\n"
             "DONE: parser tests pass\n";
  in.hypothesis = "quotes are dropped";
  std::string dir = std::string(CONCLAVE_SOURCE_DIR) + "/profiles";
  auto order = [](const std::string& text, std::vector<std::string> marks) {
    size_t at = 0;
    for (const auto& m : marks) {
      size_t p = text.find(m, at);
      if (p == std::string::npos) return false;
      at = p + m.size();
    }
    return true;
  };
  std::string glm = exec::RenderBrief(dir, "glm", in);
  CHECK(order(glm, {"Goal", "fix the tokenizer", "Context", "Constraints", "src/parser", "Done",
                    "parser tests pass"}));
  CHECK(glm.find("【") == std::string::npos);
  std::string ds = exec::RenderBrief(dir, "deepseek", in);
  CHECK(order(ds, {"Задача", "fix the tokenizer", "Где", "src/parser", "Контекст", "Не трогать",
                   "SUMMARY", "【思维模式要求】"}));
  std::string qwen = exec::RenderBrief(dir, "qwen", in);
  CHECK(order(qwen, {"Context", "Objective", "Steps", "Examples", "Response Format", "BLOCKERS"}));
  std::string codex = exec::RenderBrief(dir, "codex", in);
  CHECK(order(codex, {"Goal", "Success", "Context", "Constraints", "Autonomy", "Output", "Stop"}));
  CHECK(codex.find("think step by step") == std::string::npos);
  CHECK(codex.find("【") == std::string::npos);
}
