// Contract: see profile_model.h.
#include "exec/profile_model.h"

#include <regex>
#include <sstream>

namespace conclave::exec {
namespace {

constexpr const char* kModelEnv[] = {"ANTHROPIC_MODEL", "OPENAI_MODEL", "GEMINI_MODEL",
                                     "OPENCODE_MODEL",  "CODEX_MODEL",  "QWEN_MODEL"};

std::string Resolve(const std::string& text, const TemplateContext& ctx) {
  auto r = ResolveTemplate(text, "model", ctx);
  return r.ok() ? r->value : std::string();
}

}  // namespace

std::string ResolveModelName(const Profile& p, const std::map<std::string, std::string>& daemon_env) {
  TemplateContext ctx;
  ctx.environ = &daemon_env;
  ctx.vars = {{"HOME", "~"},          {"TMPDIR", "/tmp"},         {"DISPATCH_DIR", "."},
              {"CWD", "."},           {"budget_usd", "0"},        {"findings_schema", ""},
              {"findings_schema_file", ""}};
  for (size_t i = 0; i < p.command.size(); ++i) {
    const std::string& a = p.command[i];
    if ((a == "--model" || a == "-m") && i + 1 < p.command.size()) {
      std::string v = Resolve(p.command[i + 1], ctx);
      if (!v.empty()) return v;
    }
    if (a.rfind("--model=", 0) == 0) {
      std::string v = Resolve(a.substr(8), ctx);
      if (!v.empty()) return v;
    }
  }
  for (const char* name : kModelEnv) {
    auto it = p.env.find(name);
    if (it == p.env.end()) continue;
    std::string v = Resolve(it->second, ctx);
    if (!v.empty()) return v;
  }
  static const std::regex toml(R"re(^\s*model\s*=\s*"([^"]+)")re");
  static const std::regex json(R"re("model"\s*:\s*"([^"]+)")re");
  for (const auto& [path, content] : p.files) {
    std::istringstream lines(content);
    for (std::string line; std::getline(lines, line);) {
      if (line.find("model") == std::string::npos) continue;
      std::string resolved = Resolve(line, ctx);
      std::smatch m;
      if (std::regex_search(resolved, m, toml) || std::regex_search(resolved, m, json)) {
        return m[1];
      }
    }
  }
  return "";
}

}  // namespace conclave::exec
