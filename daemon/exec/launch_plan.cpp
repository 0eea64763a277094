#include "exec/launch_plan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "common/read_file.h"
#include "domain/findings_schema.h"
#include "exec/git_head.h"

extern char** environ;

namespace conclave::exec {
namespace fs = std::filesystem;
namespace {

bool PerProcessVariable(const std::string& k) {
  return k.rfind("CONCLAVE_DISPATCH", 0) == 0 || k.rfind("CONCLAVE_TASK", 0) == 0 ||
         k == "NOTIFY_SOCKET" || k == "WATCHDOG_USEC" || k == "WATCHDOG_PID" ||
         k == "LISTEN_FDS" || k == "LISTEN_PID";
}

// What a worker gets of the daemon's environment: enough to run programs, speak the locale
// and reach the network through a proxy — never the daemon's credentials.
// Asked for each of the daemon's variables at every dispatch: a flat scan of views, not a
// set of strings.
bool Allowed(std::string_view k) {
  static constexpr std::string_view kNames[] = {
      "PATH",       "LANG",        "LANGUAGE",   "TZ",          "TERM",          "USER",
      "LOGNAME",    "SHELL",       "HOME",       "TMPDIR",      "HTTP_PROXY",    "HTTPS_PROXY",
      "http_proxy", "https_proxy", "NO_PROXY",   "no_proxy",    "SSL_CERT_FILE", "SSL_CERT_DIR",
      "NODE_EXTRA_CA_CERTS"};
  if (k.substr(0, 3) == "LC_") return true;
  for (std::string_view n : kNames) {
    if (n == k) return true;
  }
  return false;
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
  // Files the CLI needs from the real HOME (a subscription login), copied read-only.
  auto real_home = env.find("HOME");
  for (const auto& f : plan.home_files_spec) {
    if (real_home == env.end()) break;
    plan.home_files.emplace_back(real_home->second + "/" + f.substr(2), home + "/" + f.substr(2));
  }
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
  // How the brief reaches the CLI: stdin, the last argument, or — past the kernel's
  // per-argument limit — the profile's brief_large way.
  auto delivery = PlanBriefDelivery(p, req.brief.size());
  if (!delivery.ok()) return delivery.status();
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
    // The legacy review_args, then the findings schema and the CLI's read-only mode.
    for (const auto& [field, args] : {std::pair{"review_args", &p.review_args},
                                      std::pair{"schema_args", &p.schema_args},
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
  switch (delivery.value()) {
    case BriefDelivery::kStdin:
      plan.stdin_data = req.brief;
      break;
    case BriefDelivery::kArg:
      plan.spec.argv.push_back(req.brief);
      break;
    case BriefDelivery::kLargeArgs:
      for (const auto& a : p.brief_large_args) {
        auto r = ResolveTemplate(a, "brief_large_args", ctx);
        if (!r.ok()) {
          return FailedPrecondition("profile " + p.name + " brief_large_args: " + r.status().message());
        }
        plan.spec.argv.push_back(r->value);
      }
      break;
  }
  return Status::Ok();
}

// Whether any template of p names `var` (${BRIEF_FILE}, ${DISPATCH_DIR}, ...).
bool Mentions(const Profile& p, std::string_view var) {
  auto in = [&](const std::string& t) { return t.find(var) != std::string::npos; };
  for (const auto* list : {&p.command, &p.brief_large_args, &p.budget_flag, &p.review_args,
                           &p.schema_args, &p.readonly_args}) {
    for (const auto& t : *list) {
      if (in(t)) return true;
    }
  }
  for (const auto& [k, v] : p.env) {
    if (in(v)) return true;
  }
  for (const auto& [path, content] : p.files) {
    if (in(path) || in(content)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> CredentialTokens(const std::string& content) {
  std::vector<std::string> out;
  auto token_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
           c == '+' || c == '/' || c == '=';
  };
  size_t i = 0;
  while (i < content.size()) {
    size_t j = i;
    while (j < content.size() && token_char(content[j])) ++j;
    if (j - i >= 20) out.push_back(content.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::map<std::string, std::string> WorkerBaseEnv(const Profile& p,
                                                 const std::map<std::string, std::string>& daemon) {
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : daemon) {
    bool named = std::find(p.inherit_env.begin(), p.inherit_env.end(), k) != p.inherit_env.end();
    if (k == "CONCLAVE_TOKEN" || k.rfind("CONCLAVE_", 0) == 0) continue;  // never the daemon's own
    if (Allowed(k) || named) env[k] = v;
  }
  return env;
}

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

SandboxPaths SandboxPathsFor(const Profile& p, const std::string& cwd, const std::string& state_dir,
                             const std::string& socket, const std::string& config_file,
                             const std::map<std::string, std::string>& daemon_env) {
  SandboxPaths s;
  s.cwd = cwd;
  if (!socket.empty() && socket[0] == '/') s.socket = socket;
  s.state_dir = state_dir;
  s.config_file = config_file;
  if (!p.isolate_home) s.home = Lookup(daemon_env, "HOME", "");
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg) s.runtime_dirs.push_back(xdg);
  s.runtime_dirs.push_back("/run/user/" + std::to_string(geteuid()));
  return s;
}

StatusOr<LaunchPlan> PlanLaunch(const LaunchRequest& req) {
  if (!req.profile || !req.daemon_env) return InvalidArgument("launch: no profile");
  const Profile& p = *req.profile;
  const auto& daemon_env = *req.daemon_env;
  const std::string& dir = req.dispatch_dir;
  LaunchPlan plan;
  // Environment: an allow-list of the daemon's, then isolation, then the profile's, then
  // Conclave's for this dispatch.
  std::map<std::string, std::string> env =
      req.base_env ? *req.base_env : WorkerBaseEnv(p, daemon_env);
  plan.home_files_spec = p.home_files;
  char budget[32];
  std::snprintf(budget, sizeof budget, "%.4f", req.budget_usd);
  TemplateContext ctx = TemplateContextFor(
      daemon_env, {{"CWD", req.workdir.empty() ? req.terminal_cwd : req.workdir},
                   {"DISPATCH_DIR", dir},
                   {"HOME", Lookup(daemon_env, "HOME", "/tmp")},
                   {"TMPDIR", Lookup(daemon_env, "TMPDIR", "/tmp")},
                   {"budget_usd", budget},
                   {"findings_schema", domain::FindingsSchemaText()},
                   {"findings_schema_file", dir + "/findings_schema.json"},
                   {"BRIEF_FILE", dir + "/brief.txt"}});
  if (p.isolate_home) Isolate(req.private_dir.empty() ? dir : req.private_dir, env, ctx, plan);
  if (Status s = ResolveProfileEnv(p, ctx, env, plan); !s.ok()) return s;
  std::string workdir = req.terminal_cwd;
  if (!req.workdir.empty()) {
    workdir = req.workdir;
  } else if (p.workdir == "dispatch") {
    workdir = dir + "/work";
    plan.dirs.push_back(workdir);
  }
  // A reviewer's answer schema, for ${findings_schema_file}.
  if (req.reviewer) plan.files.emplace_back(dir + "/findings_schema.json", ctx.vars["findings_schema"]);
  env["PWD"] = workdir;  // some CLIs (opencode) trust $PWD over the real working directory
  env["CONCLAVE_SOCKET"] = req.socket;
  env["CONCLAVE_TERMINAL_HANDLE"] = req.terminal;
  env["CONCLAVE_TASK_ID"] = std::to_string(req.task_id);
  env["CONCLAVE_DISPATCH_ID"] = std::to_string(req.dispatch_id);
  env["CONCLAVE_DISPATCH_TOKEN"] = req.token;
  plan.secrets.push_back(req.token);
  // The token too: dispatch ids start again with a new state directory, tokens never repeat.
  plan.tree_env = {"CONCLAVE_SOCKET=" + req.socket,
                   "CONCLAVE_DISPATCH_ID=" + std::to_string(req.dispatch_id),
                   "CONCLAVE_DISPATCH_TOKEN=" + req.token};
  plan.spec.cwd = workdir;
  if (p.sandbox == "bwrap") {
    plan.sandboxed = true;
    plan.sandbox =
        SandboxPathsFor(p, workdir, req.state_dir, req.socket, req.config_file, daemon_env);
    plan.sandbox.dispatch_dir = dir;
    // The sandbox's private /tmp: the rest is read-only.
    if (!p.isolate_home) env["TMPDIR"] = "/tmp";
  }
  if (Status s = BuildArgv(req, ctx, plan); !s.ok()) return s;
  for (const auto& [k, v] : env) plan.spec.env.push_back(k + "=" + v);
  // The rendered brief as a file only for a profile that names it: the worker gets the brief
  // by stdin or argument otherwise, and the task's brief is in the store.
  if (Mentions(p, "${BRIEF_FILE}")) plan.files.emplace_back(dir + "/brief.txt", req.brief);
  // The dispatch directory only when something goes into it before the spawn or the worker is
  // told where it is; the transcript and stdout.log are created with the first output
  // (WorkerRun), so a run that prints nothing costs no directory and no files.
  if (!plan.files.empty() || !plan.dirs.empty() || plan.sandboxed || Mentions(p, "DISPATCH_DIR")) {
    plan.dirs.insert(plan.dirs.begin(), dir);
  }
  plan.transcript_path = dir + "/transcript.log";
  plan.stdout_path = dir + "/stdout.log";
  plan.spec.stdin_null = plan.stdin_data.empty();  // nothing to write: /dev/null, no pipe
  return plan;
}

Status PrepareSpawn(LaunchPlan& plan) {
  if (Status s = PrepareLaunch(plan); !s.ok()) return s;
  if (!plan.head_of.empty()) {
    GitHead head = ReadGitHead(plan.head_of);
    plan.progress->start_head = std::move(head.commit);
    plan.progress->head_leased = head.leased;
  }
  return Status::Ok();
}

Status PrepareLaunch(LaunchPlan& plan) {
  constexpr size_t kMaxHomeFileBytes = 4 << 20;  // a CLI's login file is a few KiB
  std::error_code ec;
  for (const auto& [from, to] : plan.home_files) {
    // Read as a regular file (a link to one is fine): a FIFO or a device put there — by a
    // worker whose directory holds HOME — would stall the launcher's thread and every launch
    // behind it.
    std::string content;
    if (!ReadRegularFile(from.c_str(), &content, kMaxHomeFileBytes + 1) ||
        content.size() > kMaxHomeFileBytes) {
      return FailedPrecondition("home_files: cannot read " + from +
                                " as a regular file of at most 4 MiB");
    }
    for (auto& s : CredentialTokens(content)) plan.secrets.push_back(std::move(s));
    plan.files_readonly.emplace_back(to, std::move(content));
  }
  for (const auto& [path, content] : plan.files_readonly) {
    fs::create_directories(fs::path(path).parent_path(), ec);
    std::ofstream out(path, std::ios::trunc | std::ios::binary);
    out << content;
    if (!out) return FailedPrecondition("cannot write " + path);
    out.close();
    chmod(path.c_str(), 0400);
  }
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
  if (plan.sandboxed) {
    if (FindOnPath("bwrap", plan.spec.env).empty()) {
      return FailedPrecondition("sandbox: bwrap is not on PATH (install the bubblewrap package; "
                                "`conclave doctor` says whether it can run here)");
    }
    // The copies of home_files are bound read-only where the CLI looks for them (without an
    // isolated HOME the real ones are read-only like the rest).
    for (const auto& [real, copy] : plan.home_files) plan.sandbox.readonly.push_back(copy);
    // What the daemon writes and later reads back (the result is parsed from stdout.log) stays
    // read-only inside the writable dispatch directory: created now, so there is something to
    // bind over before the worker starts.
    for (const auto& f : {plan.transcript_path, plan.stdout_path}) {
      int fd = open(f.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (fd < 0) return FailedPrecondition("cannot create " + f);
      close(fd);
    }
    for (const auto& f : {plan.transcript_path, plan.stdout_path,
                          plan.sandbox.dispatch_dir + "/brief.txt",
                          plan.sandbox.dispatch_dir + "/findings_schema.json"}) {
      plan.sandbox.readonly.push_back(f);
    }
    if (Status s = ResolveSandboxPaths(plan.sandbox); !s.ok()) return s;
    plan.spec.argv = BwrapArgv(plan.sandbox, plan.spec.argv);
  }
  return Status::Ok();
}

}  // namespace conclave::exec
