// Fuzz target: profile JSON (exec/profile): LoadProfileFromJson on one file's text, then
// ResolveTemplate on every env value and argv entry the way a spawn does (a fixed context;
// ${file:...} references are left out so no file is read). Properties: an accepted profile
// has a valid name, a command and known enums; a rejected one names its field.
#include "exec/profile.h"
#include "fuzz_input.h"

namespace {
using namespace conclave;

void Resolve(const std::string& text, const std::string& key) {
  if (text.find("file:") != std::string::npos) return;
  static const std::map<std::string, std::string> kEnviron = {
      {"HOME", "/home/u"}, {"ANTHROPIC_API_KEY", "sk-ant-secret"}, {"EMPTY", ""}};
  exec::TemplateContext ctx;
  ctx.vars = {{"HOME", "/home/u"}, {"TMPDIR", "/tmp"}, {"DISPATCH_DIR", "/d"}, {"CWD", "/w"}};
  ctx.environ = &kEnviron;
  auto r = exec::ResolveTemplate(text, key, ctx);
  if (r.ok()) {
    for (const auto& s : r->secrets) {
      if (r->value.find(s) == std::string::npos) fuzz::PropertyFailed("secret not in value");
    }
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string field;
  auto p = exec::LoadProfileFromJson(text, "fuzz.json", &field);
  if (!p.ok()) {
    if (p.status().message().empty()) fuzz::PropertyFailed("rejected without a message");
    return 0;
  }
  if (p->name.empty() || p->name.size() > 64 || p->command.empty() || p->family.empty()) {
    fuzz::PropertyFailed("invalid profile accepted");
  }
  if (p->timeout_s < 1 || p->idle_timeout_s < 0 || p->max_concurrent < 1) {
    fuzz::PropertyFailed("out-of-range limit accepted");
  }
  for (const auto& [k, v] : p->env) Resolve(v, k);
  for (const auto& a : p->command) Resolve(a, "command");
  for (const auto& [path, content] : p->files) Resolve(content, path);
  return 0;
}
