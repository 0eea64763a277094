#include "config/config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace conclave::config {
namespace fs = std::filesystem;
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string DefaultStateDir() {
  std::string xdg = Env("XDG_STATE_HOME");
  if (!xdg.empty()) return xdg + "/conclave";
  std::string home = Env("HOME");
  if (home.empty()) home = "/tmp";
  return home + "/.local/state/conclave";
}

std::string DefaultProfilesDir() {
  if (fs::is_directory(CONCLAVE_INSTALLED_PROFILES)) return CONCLAVE_INSTALLED_PROFILES;
  return CONCLAVE_SOURCE_PROFILES;
}

template <typename T>
Status Read(const nlohmann::json& j, const char* key, T& out, const std::string& file) {
  if (!j.contains(key)) return Status::Ok();
  try {
    out = j.at(key).get<T>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument("config " + file + ": key '" + key + "': " + e.what());
  }
  return Status::Ok();
}

Status ApplyFile(const std::string& file, Config& c) {
  std::ifstream in(file);
  if (!in) return InvalidArgument("config: cannot read " + file);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument("config " + file + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) return InvalidArgument("config " + file + ": must be a JSON object");
  c.raw = j;
  for (Status s : {Read(j, "state_dir", c.state_dir, file), Read(j, "listen", c.listen, file),
                   Read(j, "log_level", c.log_level, file),
                   Read(j, "profiles", c.profiles_dir, file),
                   Read(j, "synchronous_full", c.synchronous_full, file),
                   Read(j, "heartbeat_interval_s", c.heartbeat_interval_s, file),
                   Read(j, "kill_grace_ms", c.kill_grace_ms, file),
                   Read(j, "eof_grace_ms", c.eof_grace_ms, file),
                   Read(j, "default_timeout_s", c.default_timeout_s, file),
                   Read(j, "default_idle_timeout_s", c.default_idle_timeout_s, file),
                   Read(j, "tcp_token", c.tcp_token, file)}) {
    if (!s.ok()) return s;
  }
  if (j.contains("retry")) {
    const auto& r = j["retry"];
    for (Status s : {Read(r, "base_ms", c.retry.base_ms, file),
                     Read(r, "max_ms", c.retry.max_ms, file),
                     Read(r, "max_attempts", c.retry.max_attempts, file)}) {
      if (!s.ok()) return s;
    }
  }
  if (j.contains("budgets")) {
    const auto& b = j["budgets"];
    for (Status s : {Read(b, "per_dispatch_usd", c.budgets.per_dispatch_usd, file),
                     Read(b, "per_task_usd", c.budgets.per_task_usd, file),
                     Read(b, "per_session_usd", c.budgets.per_session_usd, file),
                     Read(b, "per_family_daily_usd", c.budgets.per_family_daily_usd, file)}) {
      if (!s.ok()) return s;
    }
  }
  if (j.contains("review")) {
    const auto& r = j["review"];
    for (Status s : {Read(r, "default_cap", c.review.default_cap, file),
                     Read(r, "default_profile", c.review.default_profile, file),
                     Read(r, "default_primary", c.review.default_primary, file),
                     Read(r, "default_challengers", c.review.default_challengers, file),
                     Read(r, "round_timeout_s", c.review.round_timeout_s, file),
                     Read(r, "round_max_attempts", c.review.round_max_attempts, file),
                     Read(r, "max_fix_rounds", c.review.max_fix_rounds, file),
                     Read(r, "workdir", c.review.workdir, file)}) {
      if (!s.ok()) return s;
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Config> LoadConfig(const Flags& flags) {
  Config c;
  if (!flags.config_file.empty()) {
    Status s = ApplyFile(flags.config_file, c);
    if (!s.ok()) return s;
  }
  if (!flags.state_dir.empty()) c.state_dir = flags.state_dir;
  if (!flags.listen.empty()) c.listen = flags.listen;
  if (!flags.log_level.empty()) c.log_level = flags.log_level;
  if (!flags.profiles_dir.empty()) c.profiles_dir = flags.profiles_dir;

  if (c.state_dir.empty()) c.state_dir = DefaultStateDir();
  c.state_dir = fs::absolute(c.state_dir).lexically_normal().string();
  if (c.profiles_dir.empty()) c.profiles_dir = DefaultProfilesDir();
  c.database_path = c.state_dir + "/conclave.db";
  if (c.listen.empty()) {
    std::string runtime = Env("XDG_RUNTIME_DIR");
    c.listen = runtime.empty() ? "unix:" + c.state_dir + "/conclave.sock"
                               : "unix:" + runtime + "/conclave/conclave.sock";
  }
  if (c.listen.rfind("unix:", 0) != 0 && c.listen.rfind("tcp:", 0) != 0) {
    return InvalidArgument("listen: '" + c.listen +
                           "' must be unix:/path/to.sock or tcp:127.0.0.1:PORT");
  }
  if (c.listen.rfind("tcp:", 0) == 0) {
    std::string hostport = c.listen.substr(4);
    if (hostport.rfind("127.", 0) != 0 && hostport.rfind("localhost:", 0) != 0 &&
        hostport.rfind("[::1]:", 0) != 0) {
      return InvalidArgument("listen: TCP listeners are loopback only (got " + hostport + ")");
    }
    if (c.tcp_token.empty()) {
      return InvalidArgument("listen: a TCP listener needs tcp_token in the config file");
    }
  }
  static const char* kLevels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  bool level_ok = false;
  for (const char* l : kLevels) level_ok |= c.log_level == l;
  if (!level_ok) {
    return InvalidArgument("log-level: '" + c.log_level +
                           "' is not one of trace, debug, info, warn, error, critical, off");
  }
  if (c.heartbeat_interval_s < 0 || c.kill_grace_ms < 0 || c.eof_grace_ms < 0) {
    return InvalidArgument("config: intervals must not be negative");
  }
  if (c.review.round_timeout_s < 1) return InvalidArgument("review.round_timeout_s: must be >= 1");
  if (c.review.round_max_attempts < 1) {
    return InvalidArgument("review.round_max_attempts: must be >= 1");
  }
  if (c.review.max_fix_rounds < 0) return InvalidArgument("review.max_fix_rounds: must be >= 0");
  if (c.review.workdir.empty()) {
    // Beside the state directory, never in it: one per daemon, kept across reboots (a running
    // round resumes), owned by the same user.
    c.review.workdir = c.state_dir + "-reviews";
  }
  c.review.workdir = fs::absolute(c.review.workdir).lexically_normal().string();
  const std::string state = c.state_dir + "/";
  if ((c.review.workdir + "/").rfind(state, 0) == 0) {
    return InvalidArgument("review.workdir: " + c.review.workdir +
                           " is inside the state directory; reviewers never run there");
  }
  return c;
}

}  // namespace conclave::config
