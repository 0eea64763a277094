#include "daemon_fixture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

extern char** environ;

namespace conclave::testing {
namespace fs = std::filesystem;

nlohmann::json RunResult::Json() const { return nlohmann::json::parse(out); }

RunResult RunProgram(const std::vector<std::string>& argv, const std::string& stdin_data,
                     const std::vector<std::string>& extra_env) {
  int in[2], out[2], err[2];
  REQUIRE(pipe2(in, O_CLOEXEC) == 0);
  REQUIRE(pipe2(out, O_CLOEXEC) == 0);
  REQUIRE(pipe2(err, O_CLOEXEC) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("CONCLAVE_", 0) == 0) continue;  // never leak the dev's daemon into tests
    env.push_back(kv);
  }
  for (const auto& e : extra_env) env.push_back(e);
  std::vector<char*> av, ev;
  for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  for (const auto& e : env) ev.push_back(const_cast<char*>(e.c_str()));
  ev.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, av.data(), ev.data());
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  RunResult r;
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    FAIL("cannot spawn " << argv[0]);
    return r;
  }
  std::thread writer([&] {
    size_t off = 0;
    while (off < stdin_data.size()) {
      ssize_t n = write(in[1], stdin_data.data() + off, stdin_data.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(in[1]);
  });
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  writer.join();
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::vector<std::string> FilesContaining(const std::string& dir, const std::string& needle) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (!it->is_regular_file(ec)) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.find(needle) != std::string::npos) out.push_back(it->path().string());
  }
  return out;
}

bool WaitFor(const std::function<bool()>& cond, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

DaemonFixture::DaemonFixture() {
  char tmpl[] = "/tmp/cvXXXXXX";
  char* d = mkdtemp(tmpl);
  REQUIRE(d != nullptr);
  dir_ = d;
  socket_ = dir_ + "/s.sock";
  fs::create_directories(profiles_dir());
}

DaemonFixture::~DaemonFixture() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    bool gone = WaitFor([&] { return waitpid(pid_, nullptr, WNOHANG) == pid_; },
                        std::chrono::seconds(10));
    if (!gone) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::error_code ec;
  if (!std::getenv("CONCLAVE_KEEP_TEST_DIRS")) fs::remove_all(dir_, ec);
}

std::vector<std::string> DaemonEnv(const std::vector<std::string>& extra_env) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("CONCLAVE_", 0) == 0 || kv.rfind("NOTIFY_SOCKET", 0) == 0) continue;
    bool overridden = false;
    for (const auto& x : extra_env) {
      overridden |= kv.substr(0, kv.find('=') + 1) == x.substr(0, x.find('=') + 1);
    }
    if (!overridden) env.push_back(kv);
  }
  for (const auto& x : extra_env) env.push_back(x);
  bool capped = false;
  for (const auto& x : extra_env) capped |= x.rfind("CONCLAVE_LOOP_IDLE_CAP_MS=", 0) == 0;
  if (!capped) env.push_back("CONCLAVE_LOOP_IDLE_CAP_MS=0");
  return env;
}

void DaemonFixture::Start(const std::vector<std::string>& extra_flags) {
  std::vector<std::string> argv = launcher_;
  std::vector<std::string> daemon = {CONCLAVED_BIN, "--state-dir", state_dir(), "--listen",
                                   "unix:" + socket_, "--profiles", profiles_dir(),
                                   "--log-level", "debug"};
  argv.insert(argv.end(), daemon.begin(), daemon.end());
  for (const auto& f : extra_flags) argv.push_back(f);
  std::string log = dir_ + "/daemon.log";
  int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fd, 1);
  posix_spawn_file_actions_adddup2(&fa, fd, 2);
  const std::vector<std::string> env = DaemonEnv(extra_env_);
  std::vector<char*> av, ev;
  for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  for (const auto& e : env) ev.push_back(const_cast<char*>(e.c_str()));
  ev.push_back(nullptr);
  REQUIRE(posix_spawn(&pid_, argv[0].c_str(), &fa, nullptr, av.data(), ev.data()) == 0);
  posix_spawn_file_actions_destroy(&fa);
  close(fd);
  bool up = WaitFor(
      [&] {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
          pid_ = -1;
          return true;
        }
        return Cli({"status"}).exit_code == 0;
      },
      std::chrono::seconds(60));
  INFO(daemon_log());
  REQUIRE(up);
  REQUIRE(pid_ > 0);
}

int DaemonFixture::Stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void DaemonFixture::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

RunResult DaemonFixture::Cli(const std::vector<std::string>& args,
                             const std::string& stdin_data) const {
  std::vector<std::string> argv = {CONCLAVE_BIN, "--socket", socket_};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv, stdin_data);
}

nlohmann::json DaemonFixture::CliJson(const std::vector<std::string>& args,
                                      const std::string& stdin_data) const {
  std::vector<std::string> a = {"--json"};
  a.insert(a.end(), args.begin(), args.end());
  RunResult r = Cli(a, stdin_data);
  INFO("conclave " << args[0] << " stderr: " << r.err << " stdout: " << r.out);
  REQUIRE(r.exit_code == 0);
  return r.Json();
}

void DaemonFixture::WriteProfile(const std::string& name, const nlohmann::json& profile) const {
  std::ofstream(profiles_dir() + "/" + name + ".json") << profile.dump(2);
}

nlohmann::json DaemonFixture::FakeProfile(const std::string& name, const std::string& family,
                                          int max_concurrent) const {
  return {{"name", name},
          {"family", family},
          {"type", "cli"},
          {"command", {FAKE_WORKER_BIN}},
          {"brief", "stdin"},
          {"parser", "text"},
          {"timeout_s", 60},
          {"idle_timeout_s", 0},
          {"max_concurrent", max_concurrent},
          {"price", {{"input_per_mtok", 1.0}, {"output_per_mtok", 2.0}}}};
}

std::string DaemonFixture::WriteFile(const std::string& rel, const std::string& content) const {
  std::string path = dir_ + "/" + rel;
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << content;
  return path;
}

std::string DaemonFixture::daemon_log() const {
  std::ifstream in(dir_ + "/daemon.log");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > 8000 ? s.substr(s.size() - 8000) : s;
}

}  // namespace conclave::testing
