#include "service/doctor.h"
#include "common/loop_kick.h"

#include <boost/asio/post.hpp>
#include <regex>
#include <sstream>

#include "exec/child_process.h"
#include "exec/launcher.h"
#include "exec/launch_plan.h"
#include "exec/profile.h"
#include "exec/profile_model.h"
#include "domain/model_family.h"

namespace conclave::service {
namespace {

// What the daemon would resolve at spawn, with placeholders for per-dispatch paths.
exec::TemplateContext PlaceholderContext(const std::map<std::string, std::string>& env) {
  return exec::TemplateContextFor(
      env, {{"HOME", "~"}, {"TMPDIR", "/tmp"}, {"DISPATCH_DIR", "<dispatch>"}, {"CWD", "."}});
}

bool LooksLikeEndpoint(const std::string& key) {
  return key.find("BASE_URL") != std::string::npos || key.find("ENDPOINT") != std::string::npos ||
         key.find("API_BASE") != std::string::npos;
}

ProfileCheck StaticCheck(const exec::Profile& p, const std::map<std::string, std::string>& env) {
  ProfileCheck c;
  c.profile = p.name;
  c.family = p.family;
  c.type = p.type;
  c.sandbox = p.sandbox;
  c.program = p.command.empty() ? "" : p.command[0];
  std::vector<std::string> env_list;
  for (const auto& [k, v] : env) env_list.push_back(k + "=" + v);
  c.program_path = exec::FindOnPath(c.program, env_list);
  if (c.program_path.empty()) {
    c.problems.push_back(c.program + " is not on conclaved's PATH");
    c.fixes.push_back("install it (README, \"Model CLIs\") or put its directory on PATH before "
                      "starting conclaved");
  } else {
    c.ok.push_back(c.program + " found at " + c.program_path);
  }
  static const std::regex ref(R"(\$\{env:([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\})");
  bool endpoint_seen = false;
  auto check_text = [&](const std::string& key, const std::string& text) {
    for (auto it = std::sregex_iterator(text.begin(), text.end(), ref); it != std::sregex_iterator();
         ++it) {
      std::string name = (*it)[1];
      bool has_default = (*it)[2].matched;
      auto found = env.find(name);
      bool set = found != env.end() && !found->second.empty();
      bool secret = exec::LooksLikeSecretName(name) || exec::LooksLikeSecretName(key);
      if (set) {
        c.ok.push_back(name + " is set" + (secret ? " (value hidden)" : ": " + found->second));
      } else if (!has_default) {
        c.problems.push_back(name + " is not set (needed by " + key + ")");
        c.fixes.push_back("export " + name + "=... in conclaved's environment (for the user "
                          "service: systemctl --user set-environment " + name + "=...), then "
                          "restart conclaved");
      }
    }
    if (LooksLikeEndpoint(key)) {
      endpoint_seen = true;
      auto r = exec::ResolveTemplate(text, key, PlaceholderContext(env));
      if (r.ok()) c.ok.push_back("endpoint " + key + " = " + r->value);
    }
  };
  for (const auto& [k, v] : p.env) check_text(k, v);
  for (const auto& [path, content] : p.files) {
    check_text(path, content);
    if (content.find("base_url") == std::string::npos) continue;
    endpoint_seen = true;
    // Show the configured endpoint line of a generated config file (never a key).
    auto r = exec::ResolveTemplate(content, "config", PlaceholderContext(env));
    if (!r.ok()) continue;
    std::istringstream lines(r->value);
    for (std::string line; std::getline(lines, line);) {
      if (line.find("base_url") != std::string::npos) c.ok.push_back("endpoint " + line);
    }
  }
  if (!endpoint_seen && p.type == "cli") c.ok.push_back("endpoint: the CLI's own default");
  if (p.type == "cli") {
    const std::string model = exec::ResolveModelName(p, env);
    const domain::FamilyCheck family = domain::EffectiveFamily(p.family, model);
    if (model.empty()) {
      c.warnings.push_back("no model name in the profile's argv, env or config files: the "
                           "declared family '" + p.family + "' is trusted");
    } else if (!family.warning.empty()) {
      c.warnings.push_back(family.warning);
    } else {
      c.ok.push_back("model " + model + ": family " + family.family);
    }
  }
  return c;
}

std::vector<std::string> VersionArgv(const exec::Profile& p, const ProfileCheck& c) {
  std::vector<std::string> argv;
  if (c.program_path.empty() || p.type != "cli") return argv;
  if (p.version_command.empty()) return {c.program_path, "--version"};
  std::istringstream in(p.version_command);
  for (std::string w; in >> w;) argv.push_back(w);
  return argv;
}

// Whether bwrap can run a worker here: the same namespaces the launcher asks for
// (exec/sandbox). Then a problem for each profile that asks for the sandbox and cannot have it,
// and advice for each CLI profile without it where it would run. Blocking: the helper pool.
void ProbeSandbox(exec::CommandRunner& commands, const std::string& bwrap, DoctorReport& report) {
  std::string why;
  if (bwrap.empty()) {
    why = "bwrap is not on conclaved's PATH";
  } else {
    exec::CommandResult v = commands.Run({bwrap, "--version"}, "/tmp", 5000);
    std::string version = v.out.substr(0, v.out.find('\n'));
    exec::CommandResult r =
        commands.Run({bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                      "--unshare-pid", "--die-with-parent", "--new-session", "/bin/true"},
                     "/tmp", 10000);
    if (r.exit_code == 0) {
      report.sandbox_runs = true;
      report.sandbox = "bubblewrap runs here (" + bwrap + (version.empty() ? "" : ", " + version) + ")";
    } else {
      why = bwrap + " cannot create its namespaces here (exit " + std::to_string(r.exit_code) +
            "; user namespaces may be disabled, e.g. kernel.unprivileged_userns_clone=0 or "
            "inside a container)";
    }
  }
  if (!report.sandbox_runs) report.sandbox = "bubblewrap cannot run here: " + why;
  for (auto& c : report.profiles) {
    const bool wants = c.sandbox == "bwrap";
    if (wants && report.sandbox_runs) {
      c.ok.push_back("sandbox: bwrap runs here");
    } else if (wants) {
      c.problems.push_back("sandbox: bwrap asked for, but " + why);
      c.fixes.push_back("install bubblewrap (deploy/install-deps.sh) and allow unprivileged user "
                        "namespaces, or remove \"sandbox\" from the profile");
    } else if (report.sandbox_runs && c.type == "cli") {
      c.advice.push_back("no sandbox: this worker can read everything your user can (the state "
                         "directory's database, the config); bubblewrap runs here — set "
                         "\"sandbox\": \"bwrap\" in " + c.profile + "'s profile (README, \"Trust\")");
    }
  }
}

std::string StuckThreadsWarning(const exec::Launcher& launcher) {
  const int stuck = launcher.stuck_threads();
  if (stuck == 0) return "";
  std::string w = std::to_string(stuck) + " of " + std::to_string(launcher.replaced_threads()) +
                  " spawn thread(s) replaced as stuck have not come back (a hung filesystem "
                  "call in a launch, or a child SIGKILL could not end); their launches were "
                  "given up. ";
  if (stuck >= exec::ProcessLauncher::kMaxStuckThreads) {
    return w + "At " + std::to_string(exec::ProcessLauncher::kMaxStuckThreads) +
           " a stuck launch is no longer given up: new launches wait behind it. Look for a "
           "hung mount or a process in D state (ps -eo pid,stat,wchan,cmd)";
  }
  return w + "Look for a hung mount or a process in D state (ps -eo pid,stat,wchan,cmd)";
}

}  // namespace

void Doctor::Run(Done<DoctorReport> done) {
  DoctorReport report;
  std::vector<std::vector<std::string>> version_argv;
  for (const auto& p : core_.profiles.profiles) {
    ProfileCheck c = StaticCheck(p, core_.daemon_env);
    version_argv.push_back(VersionArgv(p, c));
    report.profiles.push_back(std::move(c));
  }
  if (std::string w = StuckThreadsWarning(core_.launcher); !w.empty()) {
    report.daemon_warnings.push_back(std::move(w));
  }
  std::vector<std::string> env_list;
  for (const auto& [k, v] : core_.daemon_env) env_list.push_back(k + "=" + v);
  std::string bwrap = exec::FindOnPath("bwrap", env_list);
  // Version probes run CLIs (some take seconds to start), and the sandbox probe creates
  // namespaces: on the helper pool, never the loop.
  auto& io = core_.io;
  auto& commands = core_.commands;
  boost::asio::post(core_.helpers, [&io, &commands, report = std::move(report), version_argv,
                                    bwrap, done = std::move(done)]() mutable {
    for (size_t i = 0; i < report.profiles.size(); ++i) {
      auto& check = report.profiles[i];
      if (version_argv[i].empty()) continue;
      exec::CommandResult r = commands.Run(version_argv[i], "/tmp", 15000);
      std::string out = r.out.substr(0, r.out.find('\n'));
      if (r.exit_code == 0 && !out.empty()) {
        check.version = out;
      } else {
        check.problems.push_back(check.program + " --version failed (exit " +
                                 std::to_string(r.exit_code) + ")");
        check.fixes.push_back("reinstall the CLI; check it runs on this Node.js version");
      }
    }
    ProbeSandbox(commands, bwrap, report);
    PostToLoop(io, [report = std::move(report), done = std::move(done)]() mutable {
      done(std::move(report));
    });
  });
}

}  // namespace conclave::service
