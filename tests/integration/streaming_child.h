// StreamingChild: a child process whose stdout is read line by line while it runs, for the
// commands that stream (watch, terminal read --follow, the Node plugin). Reads block in poll()
// with a deadline — no sleeping. stderr goes to a file (err()). The destructor stops the
// child (SIGTERM, then SIGKILL) and reaps it. CONCLAVE_* variables of the test's own
// environment are not passed on (like RunProgram).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace conclave::testing {

class StreamingChild {
 public:
  StreamingChild(const std::vector<std::string>& argv, const std::string& err_path,
                 const std::vector<std::string>& extra_env = {})
      : err_path_(err_path) {
    int out[2];
    REQUIRE(pipe2(out, O_CLOEXEC) == 0);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    REQUIRE(err >= 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err, 2);
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      if (kv.rfind("CONCLAVE_", 0) != 0) env.push_back(kv);
    }
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> av, ev;
    for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    for (const auto& e : env) ev.push_back(const_cast<char*>(e.c_str()));
    ev.push_back(nullptr);
    int rc = posix_spawn(&pid_, argv[0].c_str(), &fa, nullptr, av.data(), ev.data());
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err);
    out_ = out[0];
    REQUIRE(rc == 0);
  }

  ~StreamingChild() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      if (!WaitExit(std::chrono::seconds(5))) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
      }
    }
    if (out_ >= 0) close(out_);
  }

  // The next complete stdout line; false at EOF or when timeout passes first.
  bool NextLine(std::string* line, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto nl = buf_.find('\n');
      if (nl != std::string::npos) {
        *line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        lines_.push_back(*line);
        return true;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (eof_ || left.count() <= 0) return false;
      Drain(left);
    }
  }

  // Reads lines until one satisfies pred; false at EOF or timeout.
  bool ReadUntil(const std::function<bool(const std::string&)>& pred,
                 std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string line;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !NextLine(&line, left)) return false;
      if (pred(line)) return true;
    }
  }

  // Reads to EOF (or timeout) and reaps the child; returns its exit code (-1 on timeout).
  int Finish(std::chrono::milliseconds timeout) {
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (NextLine(&line, std::chrono::duration_cast<std::chrono::milliseconds>(
                               deadline - std::chrono::steady_clock::now()))) {
    }
    if (!eof_) return -1;
    if (!buf_.empty()) lines_.push_back(buf_), buf_.clear();
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  void Signal(int sig) const {
    if (pid_ > 0) kill(pid_, sig);
  }
  pid_t pid() const { return pid_; }
  const std::vector<std::string>& lines() const { return lines_; }
  std::string err() const {
    std::ifstream in(err_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  // Waits (in poll on a pidfd) until the child exits, and reaps it.
  bool WaitExit(std::chrono::milliseconds timeout) {
    int fd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
    if (fd >= 0) {
      pollfd p{fd, POLLIN, 0};
      poll(&p, 1, static_cast<int>(timeout.count()));
      close(fd);
    }
    return waitpid(pid_, nullptr, WNOHANG) == pid_;
  }

  void Drain(std::chrono::milliseconds timeout) {
    if (eof_) return;
    pollfd p{out_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::max<int64_t>(1, timeout.count()))) <= 0) return;
    char buf[65536];
    ssize_t n = read(out_, buf, sizeof buf);
    if (n <= 0) {
      eof_ = true;
      return;
    }
    buf_.append(buf, static_cast<size_t>(n));
  }

  pid_t pid_ = -1;
  int out_ = -1;
  bool eof_ = false;
  std::string buf_;
  std::vector<std::string> lines_;
  std::string err_path_;
};

}  // namespace conclave::testing
