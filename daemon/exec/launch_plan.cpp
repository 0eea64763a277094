#include "exec/launch_plan.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "domain/findings_schema.h"

extern char** environ;

namespace conclave::exec {
namespace fs = std::filesystem;
namespace {

bool PerProcessVariable(const std::string& k) {
  return k.rfind("CONCLAVE_DISPATCH", 0) == 0 || k.rfind("CONCLAVE_TASK", 0) == 0 ||
         k == "NOTIFY_SOCKET" || k == "WATCHDOG_USEC" || k == "WATCHDOG_PID" ||
         k == "LISTEN_FDS" || k == "LISTEN_PID";
}

std::string Lookup(const std::map<std::string, std::string>& env, const char* k,
                   const char* fallback) {
  auto it = env.find(k);
  return it == env.end() ? fallback : it->second;
}

// The isolated HOME/TMPDIR and XDG directories inside the dispatch directory.
void Isolate(const std::string& dir, std::map<std::string, std::string>& env,
             TemplateContext& ctx, LaunchPlan& plan) {
  std::string home = dir + "/home", tmp = dir + "/tmp";
  plan.dirs.push_back(home);
  plan.dirs.push_back(tmp);
  env["HOME"] = ctx.vars["HOME"] = home;
  env["TMPDIR"] = ctx.vars["TMPDIR"] = tmp;
  env["XDG_CONFIG_HOME"] = home + "/.config";
  env["XDG_CACHE_HOME"] = home + "/.cache";
  env["XDG_DATA_HOME"] = home + "/.local/share";
  env["XDG_STATE_HOME"] = home + "/.local/state";
}

Status ResolveProfileEnv(const Profile& p, const TemplateContext& ctx,
                         std::map<std::string, std::string>& env, LaunchPlan& plan) {
  for (const auto& [k, v] : p.env) {
    auto r = ResolveTemplate(v, k, ctx);
    if (!r.ok()) return Status(r.status().code(), "profile " + p.name + " env " + r.status().message());
    env[k] = r->value;
    plan.secrets.insert(plan.secrets.end(), r->secrets.begin(), r->secrets.end());
  }
  for (const auto& [path_t, content_t] : p.files) {
    auto path = ResolveTemplate(path_t, "files", ctx);
    if (!path.ok()) return FailedPrecondition("profile " + p.name + " files: " + path.status().message());
    auto content = ResolveTemplate(content_t, path_t, ctx);
    if (!content.ok()) {
      return FailedPrecondition("profile " + p.name + " files: " + content.status().message());
    }
    plan.files.emplace_back(path->value, content->value);
    plan.secrets.insert(plan.secrets.end(), content->secrets.begin(), content->secrets.end());
  }
  return Status::Ok();
}

Status BuildArgv(const LaunchRequest& req, const TemplateContext& ctx, LaunchPlan& plan) {
  const Profile& p = *req.profile;
  for (const auto& a : p.command) {
    auto r = ResolveTemplate(a, "command", ctx);
    if (!r.ok()) return FailedPrecondition("profile " + p.name + " command: " + r.status().message());
    plan.spec.argv.push_back(r->value);
  }
  if (req.budget_usd > 0) {
    for (const auto& a : p.budget_flag) {
      auto r = ResolveTemplate(a, "budget_flag", ctx);
      if (r.ok()) plan.spec.argv.push_back(r->value);
    }
  }
  if (req.reviewer) {
    for (const auto& a : p.review_args) plan.spec.argv.push_back(a);
    for (const auto& [field, args] : {std::pair{"schema_args", &p.schema_args},
                                      std::pair{"readonly_args", &p.readonly_args}}) {
      for (const auto& a : *args) {
        auto r = ResolveTemplate(a, field, ctx);
        if (!r.ok()) {
          return FailedPrecondition("profile " + p.name + " " + field + ": " + r.status().message());
        }
        plan.spec.argv.push_back(r->value);
      }
    }
  }
  if (p.brief == "arg") plan.spec.argv.push_back(req.brief);
  return Status::Ok();
}

}  // namespace

std::map<std::string, std::string> DaemonEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string k = kv.substr(0, eq);
    if (!PerProcessVariable(k)) env[k] = kv.substr(eq + 1);
  }
  return env;
}

TemplateContext TemplateContextFor(const std::map<std::string, std::string>& daemon_env,
                                   std::map<std::string, std::string> vars) {
  TemplateContext ctx;
  ctx.environ = &daemon_env;
  ctx.vars = std::move(vars);
  return ctx;
}

StatusOr<LaunchPlan> PlanLaunch(const LaunchRequest& req) {
  if (!req.profile || !req.daemon_env) return InvalidArgument("launch: no profile");
  const Profile& p = *req.profile;
  const auto& daemon_env = *req.daemon_env;
  const std::string& dir = req.dispatch_dir;
  LaunchPlan plan;
  plan.dirs.push_back(dir);
  // Environment: the daemon's own, then isolation, then the profile's, then Conclave's.
  std::map<std::string, std::string> env = daemon_env;
  char budget[32];
  std::snprintf(budget, sizeof budget, "%.4f", req.budget_usd);
  TemplateContext ctx = TemplateContextFor(
      daemon_env, {{"CWD", req.workdir.empty() ? req.terminal_cwd : req.workdir}, {"DISPATCH_DIR", dir},
                   {"HOME", Lookup(daemon_env, "HOME", "/tmp")},
                   {"TMPDIR", Lookup(daemon_env, "TMPDIR", "/tmp")},
                   {"budget_usd", budget},
                   {"findings_schema", domain::FindingsSchemaText()},
                   {"findings_schema_file", dir + "/findings-schema.json"}});
  if (p.isolate_home) Isolate(req.private_dir.empty() ? dir : req.private_dir, env, ctx, plan);
  if (Status s = ResolveProfileEnv(p, ctx, env, plan); !s.ok()) return s;
  std::string workdir = req.terminal_cwd;
  if (!req.workdir.empty()) {
    workdir = req.workdir;
  } else if (p.workdir == "dispatch") {
    workdir = dir + "/work";
    plan.dirs.push_back(workdir);
  }
  if (req.reviewer) plan.files.emplace_back(dir + "/findings-schema.json", ctx.vars["findings_schema"]);
  env["PWD"] = workdir;  // some CLIs (opencode) trust $PWD over the real working directory
  env["CONCLAVE_SOCKET"] = req.socket;
  env["CONCLAVE_TERMINAL_HANDLE"] = req.terminal;
  env["CONCLAVE_TASK_ID"] = std::to_string(req.task_id);
  env["CONCLAVE_DISPATCH_ID"] = std::to_string(req.dispatch_id);
  env["CONCLAVE_DISPATCH_TOKEN"] = req.token;
  plan.secrets.push_back(req.token);
  plan.spec.cwd = workdir;
  if (Status s = BuildArgv(req, ctx, plan); !s.ok()) return s;
  for (const auto& [k, v] : env) plan.spec.env.push_back(k + "=" + v);
  plan.files.emplace_back(dir + "/brief.txt", req.brief);
  if (p.brief == "stdin") plan.stdin_data = req.brief;
  plan.transcript_path = dir + "/transcript.log";
  plan.stdout_path = dir + "/stdout.log";
  return plan;
}

Status PrepareLaunch(const LaunchPlan& plan) {
  std::error_code ec;
  for (const auto& d : plan.dirs) {
    fs::create_directories(d, ec);
    if (ec) return FailedPrecondition("cannot create " + d + ": " + ec.message());
    chmod(d.c_str(), 0700);
  }
  for (const auto& [path, content] : plan.files) {
    fs::create_directories(fs::path(path).parent_path(), ec);
    std::ofstream out(path, std::ios::trunc);
    out << content;
    if (!out) return FailedPrecondition("cannot write " + path);
    chmod(path.c_str(), 0600);
  }
  return Status::Ok();
}

}  // namespace conclave::exec
