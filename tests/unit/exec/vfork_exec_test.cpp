// Unit tests: what a spawned child gets and keeps (exec/vfork_exec through exec/child_process):
// only its three descriptors, default signal dispositions and an empty mask whatever the
// daemon's, /dev/null for a stdin nothing is written to, and errors that name the step.
#include "exec/vfork_exec.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "exec/child_process.h"

using namespace conclave;

namespace {

std::string ReadToEnd(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    REQUIRE(poll(&p, 1, 10000) == 1);
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Runs argv as a worker is run; returns its stdout (stderr ignored) and reaps it. The
// daemon's end of the child's stdin (-1 for /dev/null) goes to *stdin_fd when asked.
std::string Run(std::vector<std::string> argv, bool stdin_null = false, int* stdin_fd = nullptr) {
  exec::SpawnSpec spec;
  spec.argv = std::move(argv);
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.cwd = "/";
  spec.stdin_null = stdin_null;
  auto c = exec::SpawnChild(spec);
  REQUIRE(c.ok());
  if (stdin_fd) *stdin_fd = c->stdin_fd;
  if (c->stdin_fd >= 0) close(c->stdin_fd);
  std::string out = ReadToEnd(c->stdout_fd);
  int st = 0;
  waitpid(c->pid, &st, 0);
  for (int fd : {c->stdout_fd, c->stderr_fd, c->pidfd}) close(fd);
  return out;
}

std::string RunShell(const std::string& line, bool stdin_null = false, int* stdin_fd = nullptr) {
  return Run({"/bin/sh", "-c", line}, stdin_null, stdin_fd);
}

// A /proc/self/status line's value, as the child printed it.
std::string Field(const std::string& status, const std::string& name) {
  std::istringstream in(status);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + ":", 0) == 0)
      return line.substr(line.find_first_not_of(" \t", name.size() + 1));
  }
  return "(missing)";
}

std::set<std::string> ChildrenOfThisThread() {
  std::ifstream f("/proc/self/task/" + std::to_string(gettid()) + "/children");
  REQUIRE(f.is_open());
  std::set<std::string> out;
  std::string pid;
  while (f >> pid) out.insert(pid);
  return out;
}

// In a forked helper (whose own 0-2 the test may rearrange): runs `sh -c line` through
// VforkExec with the given stdio and exits with the shell's status (3: not started or reaped).
[[noreturn]] void ExecLineAndExit(const char* line, int in, int out, int err) {
  // Nothing allocated: the helper is a fork of a multi-threaded process.
  char sh[] = "/bin/sh", c[] = "-c";
  char* argv[] = {sh, c, const_cast<char*>(line), nullptr};
  char* envp[] = {nullptr};
  exec::ExecRequest req;
  req.path = "/bin/sh";
  req.argv = argv;
  req.envp = envp;
  req.stdio[0] = in;
  req.stdio[1] = out;
  req.stdio[2] = err;
  exec::ExecResult r = exec::VforkExec(req);
  int st = 0;
  if (r.pid <= 0 || waitpid(r.pid, &st, 0) != r.pid) _exit(3);
  _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 4);
}

// The forked helper's exit status, 0 when the shell it ran succeeded.
int HelperStatus(pid_t helper) {
  int st = 0;
  REQUIRE(waitpid(helper, &st, 0) == helper);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

}  // namespace

TEST_CASE("a spawned child holds only 0, 1 and 2, whatever the daemon left open", "[exec]") {
  // A descriptor without close-on-exec, as a careless library might leave one.
  int leaky = open("/dev/null", O_RDONLY);
  REQUIRE(leaky > 2);
  const std::string n = std::to_string(leaky);
  // Asked with the shell's builtin test, so nothing is opened to look.
  std::string fds = RunShell("for n in 0 1 2 " + n +
                             "; do [ -e /proc/$$/fd/$n ] && printf '%s ' $n; " + "done; echo");
  close(leaky);
  CHECK(fds == "0 1 2 \n");
}

TEST_CASE("a spawned child starts with default signal dispositions and an empty mask", "[exec]") {
  // What the daemon ignores, catches and blocks must not reach a worker: an ignored SIGPIPE
  // survives execve unless reset, and so does a blocked mask.
  struct sigaction ign {
  }, handled{}, old_pipe{}, old_usr2{};
  ign.sa_handler = SIG_IGN;
  handled.sa_handler = [](int) {};
  sigaction(SIGPIPE, &ign, &old_pipe);
  sigaction(SIGUSR2, &handled, &old_usr2);
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &old_mask);
  // cat itself, not a shell, which would clear its mask on start.
  std::string status = Run({"cat", "/proc/self/status"});
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGUSR2, &old_usr2, nullptr);
  sigaction(SIGPIPE, &old_pipe, nullptr);
  INFO(status);
  CHECK(Field(status, "SigIgn") == "0000000000000000");
  CHECK(Field(status, "SigBlk") == "0000000000000000");
}

TEST_CASE("a worker given no stdin reads /dev/null, and the daemon holds no pipe for it",
          "[exec]") {
  int stdin_fd = 0;
  // cat meets end of file at once.
  CHECK(RunShell("readlink /proc/self/fd/0; cat; echo end", true, &stdin_fd) == "/dev/null\nend\n");
  CHECK(stdin_fd == -1);
  // Without stdin_null it stays a pipe the caller writes.
  CHECK(RunShell("readlink /proc/self/fd/0").rfind("pipe:", 0) == 0);
}

TEST_CASE("a spawn that fails names its step and leaves no child behind", "[exec]") {
  namespace fs = std::filesystem;
  exec::SpawnSpec spec;
  spec.env = {"PATH=/usr/bin:/bin"};
  auto before = ChildrenOfThisThread();
  SECTION("a working directory that does not exist") {
    spec.argv = {"true"};
    spec.cwd = "/nonexistent-conclave-dir";
    auto c = exec::SpawnChild(spec);
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().message().find("No such file or directory (chdir)") != std::string::npos);
  }
  SECTION("an executable file the kernel cannot run") {
    fs::path f = fs::temp_directory_path() / ("cv-noexec-" + std::to_string(getpid()));
    std::ofstream(f) << "\x7f"
                        "ELF not really\n";
    fs::permissions(f, fs::perms::owner_all);
    spec.argv = {f.string()};
    spec.cwd = "/";
    auto c = exec::SpawnChild(spec);
    fs::remove(f);
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().message().find("(execve)") != std::string::npos);
  }
  // The failed child was reaped, not left a zombie: no child is new since.
  std::set<std::string> added;
  for (const auto& pid : ChildrenOfThisThread()) {
    if (!before.count(pid)) added.insert(pid);
  }
  CHECK(added.empty());
}

// A daemon started with 0-2 closed gets its pipes there: a source below 3 must not be
// overwritten by an earlier dup before it is used. Here stdout and stderr are crossed (the
// child's 1 is our 2 and its 2 our 1), in a forked process so the test's own 1 and 2 stay.
TEST_CASE("descriptors crossed onto 0-2 reach the child as asked", "[exec]") {
  int out[2], err[2];
  REQUIRE(pipe(out) == 0);
  REQUIRE(pipe(err) == 0);
  pid_t helper = fork();
  REQUIRE(helper >= 0);
  if (helper == 0) {
    dup2(out[1], 2);  // what the child prints on 1 must land in `out`
    dup2(err[1], 1);  // and its 2 in `err`
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    ExecLineAndExit("echo to-out; echo to-err >&2", -1, 2, 1);
  }
  close(out[1]);
  close(err[1]);
  std::string to_out = ReadToEnd(out[0]), to_err = ReadToEnd(err[0]);
  close(out[0]);
  close(err[0]);
  CHECK(HelperStatus(helper) == 0);
  CHECK(to_out == "to-out\n");
  CHECK(to_err == "to-err\n");
}

// A daemon started with 0 closed keeps its /dev/null (close-on-exec) there: a descriptor
// already in place keeps only its close-on-exec flag from being, or execve would close it.
TEST_CASE("a close-on-exec descriptor already in place stays open in the child", "[exec]") {
  int out[2];
  REQUIRE(pipe(out) == 0);
  pid_t helper = fork();
  REQUIRE(helper >= 0);
  if (helper == 0) {
    int in[2];
    if (pipe(in) != 0 || write(in[1], "in-place\n", 9) != 9) _exit(5);
    close(in[1]);
    if (dup3(in[0], 0, O_CLOEXEC) != 0) _exit(6);  // fd 0, close-on-exec, as the kept one
    close(in[0]);
    ExecLineAndExit("cat; echo end", 0, out[1], -1);
  }
  close(out[1]);
  std::string got = ReadToEnd(out[0]);
  close(out[0]);
  CHECK(HelperStatus(helper) == 0);
  CHECK(got == "in-place\nend\n");
}
