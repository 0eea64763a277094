#include "config/config.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <type_traits>

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
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // get<int>() of 1e300 or 2^40 is an undefined or wrapping conversion: range-check first.
    const auto& v = j.at(key);
    const double lo = static_cast<double>(std::numeric_limits<T>::min());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (v.is_number() && !(v.get<double>() >= lo && v.get<double>() <= hi)) {
      return InvalidArgument("config " + file + ": key '" + key + "': " + v.dump() +
                             " is out of range");
    }
  }
  try {
    out = j.at(key).get<T>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument("config " + file + ": key '" + key + "': " + e.what());
  }
  return Status::Ok();
}

Status ApplyText(std::string_view text, const std::string& file, Config& c) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument("config " + file + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) return InvalidArgument("config " + file + ": must be a JSON object");
  c.raw = j;
  for (Status s : {Read(j, "state_dir", c.state_dir, file), Read(j, "listen", c.listen, file),
                   Read(j, "log_level", c.log_level, file),
                   Read(j, "profiles", c.profiles_dir, file),
                   Read(j, "synchronous_full", c.synchronous_full, file),
                   Read(j, "api_queue_thread", c.api_queue_thread, file),
                   Read(j, "loop_poll_us", c.loop_poll_us, file),
                   Read(j, "heartbeat_interval_s", c.heartbeat_interval_s, file),
                   Read(j, "kill_grace_ms", c.kill_grace_ms, file),
                   Read(j, "notify_command", c.notify_command, file),
                   Read(j, "eof_grace_ms", c.eof_grace_ms, file),
                   Read(j, "spawn_timeout_ms", c.spawn_timeout_ms, file),
                   Read(j, "child_nice", c.child_nice, file),
                   Read(j, "default_timeout_s", c.default_timeout_s, file),
                   Read(j, "default_idle_timeout_s", c.default_idle_timeout_s, file),
                   Read(j, "liveness_cpu_ms", c.liveness_cpu_ms, file),
                   Read(j, "liveness_io_bytes", c.liveness_io_bytes, file),
                   Read(j, "retry_after_cap_s", c.retry_after_cap_s, file),
                   Read(j, "transcript_cap_mib", c.transcript_cap_mib, file),
                   Read(j, "crash_loop_window_s", c.crash_loop_window_s, file),
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
    for (Status s : {Read(r, "default_mode", c.review.default_mode, file),
                     Read(r, "default_cap", c.review.default_cap, file),
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
  if (j.contains("retention")) {
    const auto& r = j["retention"];
    for (Status s : {Read(r, "dispatch_days", c.retention.dispatch_days, file),
                     Read(r, "heartbeat_days", c.retention.heartbeat_days, file),
                     Read(r, "read_message_days", c.retention.read_message_days, file),
                     Read(r, "flow_days", c.retention.flow_days, file),
                     Read(r, "interval_s", c.retention.interval_s, file)}) {
      if (!s.ok()) return s;
    }
  }
  if (j.contains("flow")) {
    const auto& f = j["flow"];
    for (Status s : {Read(f, "worktree_root", c.flow.worktree_root, file),
                     Read(f, "verify_profile", c.flow.verify_profile, file),
                     Read(f, "max_parallel_writers", c.flow.max_parallel_writers, file)}) {
      if (!s.ok()) return s;
    }
  }
  return Status::Ok();
}

// A TCP listener's HOST:PORT, decided by the address, not by its spelling: an IPv4 address in
// 127.0.0.0/8, [::1], or "localhost" when every address it resolves to is one of those. Any
// other name is refused without a lookup ("127.0.0.1.evil.com" is a name, not an address).
bool IsLoopback(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(sa)->sin_addr.s_addr) >> 24) == 127;
  }
  if (sa->sa_family == AF_INET6) {
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr);
  }
  return false;
}

Status CheckLoopback(const std::string& hostport) {
  const std::string usage = " (TCP listeners are loopback only: tcp:127.0.0.1:PORT, "
                            "tcp:[::1]:PORT or tcp:localhost:PORT)";
  auto colon = hostport.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument("listen: '" + hostport + "' is not HOST:PORT" + usage);
  }
  std::string host = hostport.substr(0, colon), port = hostport.substr(colon + 1);
  int port_n = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), port_n);
  if (ec != std::errc() || end != port.data() + port.size() || port_n < 1 || port_n > 65535) {
    return InvalidArgument("listen: port '" + port + "' is not a number from 1 to 65535");
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    return InvalidArgument("listen: an IPv6 address is written in brackets, e.g. tcp:[::1]:" + port);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = host == "localhost" ? 0 : AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
    return InvalidArgument("listen: '" + host + "' is not an IP address" + usage);
  }
  bool all_loopback = true;
  for (addrinfo* a = res; a; a = a->ai_next) all_loopback &= IsLoopback(a->ai_addr);
  freeaddrinfo(res);
  if (!all_loopback) {
    return InvalidArgument("listen: " + host + " is not a loopback address" + usage);
  }
  return Status::Ok();
}

// Flags on top of the file's settings, then defaults and validation.
StatusOr<Config> Finish(Config c, const Flags& flags);

}  // namespace

StatusOr<Config> LoadConfig(const Flags& flags) {
  Config c;
  if (!flags.config_file.empty()) {
    std::ifstream in(flags.config_file);
    if (!in) return InvalidArgument("config: cannot read " + flags.config_file);
    std::stringstream ss;
    ss << in.rdbuf();
    Status s = ApplyText(ss.str(), flags.config_file, c);
    if (!s.ok()) return s;
    c.config_file = fs::absolute(flags.config_file).lexically_normal().string();
  }
  return Finish(std::move(c), flags);
}

StatusOr<Config> LoadConfigFromJson(std::string_view text, const std::string& file,
                                    const Flags& flags) {
  Config c;
  Status s = ApplyText(text, file, c);
  if (!s.ok()) return s;
  return Finish(std::move(c), flags);
}

namespace {

StatusOr<Config> Finish(Config c, const Flags& flags) {
  if (!flags.state_dir.empty()) c.state_dir = flags.state_dir;
  if (!flags.listen.empty()) c.listen = flags.listen;
  if (!flags.log_level.empty()) c.log_level = flags.log_level;
  if (!flags.profiles_dir.empty()) c.profiles_dir = flags.profiles_dir;

  if (c.state_dir.empty()) c.state_dir = DefaultStateDir();
  c.state_dir = fs::absolute(c.state_dir).lexically_normal().string();
  if (c.profiles_dir.empty()) c.profiles_dir = DefaultProfilesDir();
  if (c.flow.worktree_root.empty()) {
    // Outside the state directory: sandboxed workers and reviewers can reach it.
    std::string data = Env("XDG_DATA_HOME");
    if (data.empty()) data = (Env("HOME").empty() ? std::string("/tmp") : Env("HOME")) + "/.local/share";
    c.flow.worktree_root = data + "/conclave/worktrees";
  }
  c.flow.worktree_root = fs::absolute(c.flow.worktree_root).lexically_normal().string();
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
    if (Status s = CheckLoopback(c.listen.substr(4)); !s.ok()) return s;
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
  if (c.spawn_timeout_ms < 100) {
    // Below that a healthy spawn on a busy machine could be taken for a stuck one.
    return InvalidArgument("config: spawn_timeout_ms must be at least 100");
  }
  if (c.loop_poll_us < 0 || c.loop_poll_us > 1000) {
    return InvalidArgument("config: loop_poll_us must be between 0 (never poll) and 1000");
  }
  if (c.child_nice < 0 || c.child_nice > 19) {
    return InvalidArgument("config: child_nice must be between 0 (as the daemon) and 19");
  }
  if (c.crash_loop_window_s < 0) {
    return InvalidArgument("config: crash_loop_window_s must not be negative");
  }
  if (c.liveness_cpu_ms < 0) return InvalidArgument("config: liveness_cpu_ms must not be negative");
  if (c.retry_after_cap_s < 0) {
    return InvalidArgument("config: retry_after_cap_s must not be negative");
  }
  if (c.liveness_io_bytes < 0) {
    return InvalidArgument("config: liveness_io_bytes must not be negative");
  }
  if (c.transcript_cap_mib < 0 || c.transcript_cap_mib > 1 << 20) {
    return InvalidArgument("config: transcript_cap_mib must be between 0 (no cap) and 1048576");
  }
  for (auto [name, v] :
       {std::pair<const char*, double>{"dispatch_days", c.retention.dispatch_days},
        {"heartbeat_days", c.retention.heartbeat_days},
        {"read_message_days", c.retention.read_message_days},
        {"flow_days", c.retention.flow_days}}) {
    if (!(v >= 0 && v <= 36500)) {
      return InvalidArgument(std::string("retention.") + name +
                             ": must be between 0 (keep for ever) and 36500 days");
    }
  }
  if (c.retention.interval_s < 1) return InvalidArgument("retention.interval_s: must be >= 1");
  if (!c.notify_command.empty() && c.notify_command[0].empty()) {
    return InvalidArgument("notify_command: the first element must name the program to run");
  }
  if (c.review.round_timeout_s < 1) return InvalidArgument("review.round_timeout_s: must be >= 1");
  {
    static const char* kModes[] = {"mechanical", "simple", "ordinary", "strong", "debate"};
    bool known = false;
    for (const char* m : kModes) known |= c.review.default_mode == m;
    if (!known) {
      return InvalidArgument("review.default_mode: '" + c.review.default_mode +
                             "' is not one of mechanical, simple, ordinary, strong, debate");
    }
  }
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

}  // namespace
}  // namespace conclave::config
