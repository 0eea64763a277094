#include "exec/daemon_secrets.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/read_file.h"
#include "exec/launch_plan.h"

namespace conclave::exec {
namespace {
constexpr size_t kMinSecretBytes = 8;

bool CredentialName(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const char* marker : {"KEY", "TOKEN", "SECRET", "PASSWORD"}) {
    if (name.find(marker) != std::string::npos) return true;
  }
  return false;
}
}  // namespace

std::vector<std::string> DaemonSecrets(const std::map<std::string, std::string>& daemon_env,
                                       const ProfileSet& profiles) {
  std::set<std::string> out;
  auto add = [&](const std::string& v) {
    if (v.size() >= kMinSecretBytes) out.insert(v);
  };
  for (const auto& [k, v] : daemon_env) {
    if (CredentialName(k)) add(v);
  }
  auto home = daemon_env.find("HOME");
  TemplateContext ctx = TemplateContextFor(
      daemon_env, {{"HOME", home == daemon_env.end() ? "/" : home->second}, {"TMPDIR", "/tmp"},
                   {"DISPATCH_DIR", "/"}, {"CWD", "/"}, {"budget_usd", "0"}});
  for (const auto& p : profiles.profiles) {
    for (const auto& [k, v] : p.env) {
      auto r = ResolveTemplate(v, k, ctx);
      if (r.ok()) {
        for (const auto& s : r->secrets) add(s);
      }
    }
    if (home == daemon_env.end()) continue;
    for (const auto& f : p.home_files) {
      // Regular files only (at start-up, before anything serves): never waits on a FIFO.
      std::string content;
      if (!ReadRegularFile((home->second + "/" + f.substr(2)).c_str(), &content, 4 << 20)) {
        continue;
      }
      for (const auto& t : CredentialTokens(content)) add(t);
    }
  }
  return {out.begin(), out.end()};
}

}  // namespace conclave::exec
