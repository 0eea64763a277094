// fake_worker: a scriptable stand-in for a model CLI, driven by "FAKE: <verb> <args>" lines
// in the brief it reads from stdin (or the last argument). Verbs run in order:
//   print TEXT          print a line on stdout        stderr TEXT   a line on stderr
//   sleep MS            sleep                         hang          sleep forever (ignores SIGTERM
//                                                                   with "hang stubborn")
//   spew BYTES          print BYTES of filler         cost USD      print "conclave-cost-usd: USD"
//   grandchild PIDFILE  fork a sleeping grandchild in the same group, write its pid
//   pidfile FILE        append this worker's pid to FILE (the soak checks none survives)
//   escapee PIDFILE     a grandchild that leaves the run: setsid, a double fork (re-parented
//                       away from the worker), ignores SIGTERM; writes its pid
//   on-term FILE        on SIGTERM write "graceful" to FILE and exit 0 (a clean stop)
//   write FILE TEXT     write TEXT to FILE (relative to cwd)
//   changes FILE        list FILE under CHANGES       status S      PASS (default) | FAIL | BLOCKED
//   blockers TEXT       the BLOCKERS section          no-contract   omit the contract sections
//   print-env NAME      print the value of an env var (to test redaction)
//   print-cwd           print "CWD=<the real working directory>" (getcwd, not $PWD)
// An adversarial worker (the trust tests):
//   try-cli MODE ARGS   run $CONCLAVE_CLI ARGS (split on spaces); MODE env = as given,
//                       noenv = every CONCLAVE_* variable removed, setsid = noenv in a new
//                       session after a double fork, setsid-env = the same keeping the
//                       environment; prints "TRY[ARGS] exit=N err=<stderr>"
//   save-env NAME FILE  write the variable's raw value to FILE (outside the daemon's view)
//   leak-env NAME       print the value raw, base64-encoded at three offsets, URL-encoded, and
//                       across a 16 KiB read boundary of the daemon's pipe
//   exfiltrate NAME     send the value to the coordinator in a message body
//   send-done           run `$CONCLAVE_CLI send --type worker_done --subject done` itself
//   exit N              exit with N now (after flushing the contract if any was printed)
//   fail-until N FILE   exit 3 with "transient" on stderr for the first N runs (counter in FILE)
//   count FILE          increment the counter in FILE
//   sequence FILE s1|s2 the Nth run takes step sN (ok, fail:MSG, exit:N:MSG, hang, json:TEXT)
//   hang-once FILE      hang on the first run (writes its pid to FILE), go on in later runs
//   wait-file PATH      block (inotify, no polling) until PATH exists: the test decides when
//                       the worker finishes, however slow the build (ASan) is; $NAME in PATH
//                       is the environment variable's value (e.g. $CONCLAVE_DISPATCH_ID);
//                       PATH's directory must exist
// What a sandbox lets through (the sandbox tests):
//   try-read PATH       print "READ[PATH] ok N bytes" or "READ[PATH] error=<strerror>"
//   try-write PATH      create PATH: "WRITE[PATH] ok" or "WRITE[PATH] error=<strerror>"
//   sh COMMAND          run /bin/sh -c COMMAND: "SH[COMMAND] exit=N"
//   linger FILE         leave a member of the group that drops its pipes and environment once
//                       the worker exits; its pid goes to FILE
#include <fcntl.h>
// Silent but working (liveness from CPU/IO, not output):
//   busy-silent MS      burn CPU for MS milliseconds, printing nothing
//   read-slow-pipe MS   for MS milliseconds read a pipe that a child feeds 16 KiB every 50 ms,
//                       printing nothing and using little CPU
// A flow's writer (its brief is the same each round; a fix round's adds "FIX ROUND"):
//   append FILE TEXT    append a line to FILE (every run changes the file)
//   if-fix VERB ARGS    run VERB only in a fix round      if-first VERB ARGS   only in the first
// A worker that asks (its brief comes back with "Answer to your BLOCKERS"):
//   if-answered VERB ARGS   run VERB only once answered   if-unanswered VERB ARGS   only before
// A writer re-queued after an attempt that ended early (its brief opens "RESUME, DON'T RESTART"):
//   if-resumed VERB ARGS    run VERB only when resumed    if-fresh VERB ARGS   only when not
//   save-brief FILE         write the whole brief it received to FILE
// Review lines may also come from a diff: "+FAKE-REVIEW ..." counts like "FAKE-REVIEW ...".
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

int Bump(const std::string& file) {
  int n = 0;
  std::ifstream(file) >> n;
  std::ofstream(file) << n + 1;
  return n + 1;
}

std::string Base64(const std::string& s) {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < s.size(); i += 3) {
    unsigned v = (uint8_t(s[i]) << 16) | (uint8_t(s[i + 1]) << 8) | uint8_t(s[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out += a[(v >> k) & 63];
  }
  if (i < s.size()) {
    unsigned v = uint8_t(s[i]) << 16;
    if (i + 1 < s.size()) v |= uint8_t(s[i + 1]) << 8;
    out += a[(v >> 18) & 63];
    out += a[(v >> 12) & 63];
    out += i + 1 < s.size() ? a[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

void LeakEverywhere(const std::string& secret) {
  std::cout << "raw: " << secret << "\n";
  for (const char* prefix : {"", "a", "ab"}) {
    std::cout << "b64: " << Base64(prefix + secret + "tail") << "\n";
  }
  std::string url;
  for (unsigned char c : secret) {
    char buf[4];
    std::snprintf(buf, sizeof buf, "%%%02X", c);
    url += std::isalnum(c) ? std::string(1, static_cast<char>(c)) : std::string(buf);
  }
  std::cout << "url: " << url << "\n";
  std::cout.flush();
  // One write that the daemon's 16 KiB reads must split inside the secret.
  std::string block(16384 - secret.size() / 2, '.');
  block += secret + "\n";
  ssize_t n = write(1, block.data(), block.size());
  (void)n;
}

// Runs the conclave CLI the way a worker trying to escape would.
std::string TryCli(const std::string& spec) {
  std::istringstream w(spec);
  std::string mode, a;
  w >> mode;
  std::vector<std::string> args;
  while (w >> a) args.push_back(a);
  const char* cli_env = std::getenv("CONCLAVE_CLI");
  std::string cli = cli_env ? cli_env : "conclave";
  int err_pipe[2];
  if (pipe(err_pipe) != 0) return "TRY pipe failed";
  pid_t p = fork();
  if (p == 0) {
    dup2(err_pipe[1], 2);
    close(err_pipe[0]);
    if (mode != "env" && mode != "setsid-env") {
      std::vector<std::string> names;
      for (char** e = environ; e && *e; ++e) {
        std::string kv = *e;
        if (kv.rfind("CONCLAVE_", 0) == 0) names.push_back(kv.substr(0, kv.find('=')));
      }
      for (const auto& n : names) unsetenv(n.c_str());
    }
    if (mode == "setsid" || mode == "setsid-env") {
      // A new session, then a double fork: the CLI's parent is gone and it is re-parented
      // away from the worker (to the daemon, as subreaper, or to init).
      setsid();
      if (fork() != 0) _exit(0);
    }
    pid_t c = fork();
    if (c == 0) {
      std::vector<char*> av;
      av.push_back(const_cast<char*>(cli.c_str()));
      for (auto& x : args) av.push_back(const_cast<char*>(x.c_str()));
      av.push_back(nullptr);
      execv(cli.c_str(), av.data());
      _exit(127);
    }
    int cst = 0;
    waitpid(c, &cst, 0);
    std::string code = "EXIT=" + std::to_string(WIFEXITED(cst) ? WEXITSTATUS(cst) : -1) + "\n";
    ssize_t wn = write(2, code.data(), code.size());
    (void)wn;
    _exit(0);
  }
  close(err_pipe[1]);
  std::string err;
  char buf[4096];
  ssize_t n;
  while ((n = read(err_pipe[0], buf, sizeof buf)) > 0) err.append(buf, static_cast<size_t>(n));
  close(err_pipe[0]);
  int st = 0;
  waitpid(p, &st, 0);
  std::string joined, code = "?";
  for (auto& x : args) joined += (joined.empty() ? "" : " ") + x;
  auto at = err.rfind("EXIT=");
  if (at != std::string::npos) {
    code = err.substr(at + 5, err.find('\n', at) - at - 5);
    err.erase(at);
  }
  std::replace(err.begin(), err.end(), '\n', ' ');
  return "TRY[" + joined + "] exit=" + code + " err=" + err;
}

}  // namespace

// path with each $NAME (letters, digits, '_') replaced by that environment variable's value.
std::string ExpandEnv(const std::string& path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    size_t j = i + 1;
    while (path[i] == '$' && j < path.size() && (std::isalnum(static_cast<unsigned char>(path[j])) || path[j] == '_')) ++j;
    if (path[i] != '$' || j == i + 1) {
      out += path[i];
      continue;
    }
    const char* v = std::getenv(path.substr(i + 1, j - i - 1).c_str());
    out += v ? v : "";
    i = j - 1;
  }
  return out;
}

// Returns once `path` exists, woken by inotify on its directory (watch first, then check).
void WaitForFile(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  int fd = inotify_init1(IN_CLOEXEC);
  if (fd >= 0) inotify_add_watch(fd, dir.c_str(), IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE);
  struct stat st;
  while (stat(path.c_str(), &st) != 0) {
    char buf[4096];
    if (fd < 0 || read(fd, buf, sizeof buf) < 0) break;
  }
  if (fd >= 0) close(fd);
}

int main(int argc, char** argv) {
  std::string brief;
  if (argc > 1) {
    brief = argv[argc - 1];
  } else {
    brief.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  // Review mode: "FAKE-REVIEW <family> <round|*> <action>" lines in the artifact script the
  // reviewer whose profile sets FAKE_FAMILY. Actions: json <findings array> | hang | garbage |
  // garbage-once FILE | once FILE <findings array> (those findings on the first run, none
  // after) | count-wait FILE GO (append a line to FILE, answer "no findings" once GO exists) |
  // exit N | ls (one INFO finding: title = the entries of the working
  // directory, detail = its path) | claims-changes (a CHANGES section naming a file). A review
  // brief with no matching line answers "no findings". With FAKE_STRICT=1 in its environment
  // the reviewer answers in the findings format only when its brief carries the answer format
  // ("ANSWER FORMAT (required)"); otherwise it answers in prose, as a real model would.
  if (brief.find("REVIEW-ROUND: ") != std::string::npos) {
    const char* strict = std::getenv("FAKE_STRICT");
    if (strict && std::string(strict) == "1" &&
        brief.find("ANSWER FORMAT (required)") == std::string::npos) {
      std::cout << "I read the change and it looks reasonable to me.\n";
      return 0;
    }
    const char* fam = std::getenv("FAKE_FAMILY");
    std::string family = fam ? fam : "";
    int round = std::atoi(brief.c_str() + brief.find("REVIEW-ROUND: ") + 14);
    std::istringstream ls(brief);
    std::string l, action = "json []";
    while (std::getline(ls, l)) {
      if (l.rfind("+FAKE-REVIEW ", 0) == 0) l.erase(0, 1);  // a line of a reviewed diff
      if (l.rfind("FAKE-REVIEW ", 0) != 0) continue;
      std::istringstream w(l.substr(12));
      std::string f, r;
      w >> f >> r;
      if (f != family || (r != "*" && std::atoi(r.c_str()) != round)) continue;
      std::getline(w, action);
      if (!action.empty() && action[0] == ' ') action.erase(0, 1);
      if (r != "*") break;  // an exact round wins over a wildcard seen earlier
    }
    if (action.rfind("once ", 0) == 0) {
      std::istringstream w(action.substr(5));
      std::string file, findings;
      w >> file;
      std::getline(w, findings);
      action = Bump(file) == 1 ? "json " + findings : "json []";
    }
    if (action.rfind("json ", 0) == 0) {
      std::cout << "Review notes.\n```json\n{\"findings\": " << action.substr(5) << "}\n```\n";
    } else if (action == "hang") {
      for (;;) pause();
    } else if (action.rfind("count-wait ", 0) == 0) {
      // Counts its runs in FILE, then answers "no findings" once GO exists.
      std::istringstream w(action.substr(11));
      std::string file, go;
      w >> file >> go;
      std::ofstream(file, std::ios::app) << "run\n";
      WaitForFile(go);
      std::cout << "```json\n{\"findings\": []}\n```\n";
    } else if (action.rfind("garbage-once ", 0) == 0) {
      std::string file = action.substr(13);
      if (Bump(file) == 1) {
        std::cout << "I think it is fine, no JSON here." << std::endl;
      } else {
        std::cout << "```json\n{\"findings\": []}\n```\n";
      }
    } else if (action == "garbage") {
      std::cout << "```json\n{\"findings\": [ {\"severity\": \"SEVERE\"} \n```\n";
    } else if (action.rfind("exit ", 0) == 0) {
      std::cerr << "reviewer crashed" << std::endl;
      return std::atoi(action.c_str() + 5);
    } else if (action == "ls") {
      std::vector<std::string> names;
      for (const auto& e : std::filesystem::directory_iterator(".")) {
        names.push_back(e.path().filename().string());
      }
      std::sort(names.begin(), names.end());
      std::string listing;
      for (const auto& n : names) listing += (listing.empty() ? "" : " ") + n;
      char cwd[4096];
      std::string here = getcwd(cwd, sizeof cwd) ? cwd : "?";
      std::cout << "```json\n{\"findings\": [{\"id\": \"LS\", \"severity\": \"INFO\", "
                << "\"category\": \"docs\", \"location\": {\"path\": \"cwd\", \"line\": 0}, "
                << "\"title\": \"" << listing << "\", \"detail\": \"" << here
                << "\", \"stance\": \"new\", \"refs\": []}]}\n```\n";
    } else if (action == "claims-changes") {
      std::cout << "```json\n{\"findings\": []}\n```\nCHANGES:\n- src/a.cpp: fixed it myself\n";
    } else if (action == "try-git") {
      // A reviewer with a shell tries to commit through its worktree of the reviewed repo.
      int rc = std::system("git -C repo -c user.name=r -c user.email=r@x commit -q --allow-empty "
                           "-m reviewer-was-here >/dev/null 2>&1");
      std::cout << "```json\n{\"findings\": [{\"id\": \"GIT\", \"severity\": \"INFO\", "
                << "\"category\": \"docs\", \"location\": {\"path\": \"repo\", \"line\": 0}, "
                << "\"title\": \"commit " << (rc == 0 ? "worked" : "refused") << "\", \"detail\": \""
                << (std::filesystem::exists("repo/.git") ? "has .git" : "no .git")
                << "\", \"stance\": \"new\", \"refs\": []}]}\n```\n";
    }
    return 0;
  }
  std::string status = "PASS", blockers = "none";
  std::vector<std::string> changes;
  bool contract = true;
  int exit_code = 0;
  std::istringstream lines(brief);
  std::string line;
  while (std::getline(lines, line)) {
    auto pos = line.find("FAKE:");
    if (pos == std::string::npos) continue;
    std::istringstream cmd(line.substr(pos + 5));
    std::string verb;
    cmd >> verb;
    const bool fix_round = brief.find("FIX ROUND") != std::string::npos;
    if (verb == "if-fix" || verb == "if-first") {
      if ((verb == "if-fix") != fix_round) continue;
      cmd >> verb;
    }
    // A blocked worker's task comes back with the coordinator's answer in its brief.
    const bool answered = brief.find("Answer to your BLOCKERS") != std::string::npos;
    if (verb == "if-answered" || verb == "if-unanswered") {
      if ((verb == "if-answered") != answered) continue;
      cmd >> verb;
    }
    const bool resumed = brief.find("RESUME, DON'T RESTART") != std::string::npos;
    if (verb == "if-resumed" || verb == "if-fresh") {
      if ((verb == "if-resumed") != resumed) continue;
      cmd >> verb;
    }
    std::string rest;
    std::getline(cmd, rest);
    if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
    if (verb == "print") {
      std::cout << rest << std::endl;
    } else if (verb == "stderr") {
      std::cerr << rest << std::endl;
    } else if (verb == "sleep") {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atoll(rest.c_str())));
    } else if (verb == "busy-silent") {
      auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::atoll(rest.c_str()));
      volatile uint64_t spin = 0;
      while (std::chrono::steady_clock::now() < end) {
        for (int i = 0; i < 100000; ++i) spin = spin + static_cast<uint64_t>(i);
      }
    } else if (verb == "read-slow-pipe") {
      auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::atoll(rest.c_str()));
      int fds[2];
      if (pipe(fds) != 0) return 8;
      pid_t feeder = fork();
      if (feeder == 0) {
        close(fds[0]);
        std::string chunk(16384, 'z');
        for (;;) {
          if (write(fds[1], chunk.data(), chunk.size()) < 0) _exit(0);
          // Paces a simulated slow producer (workload, not test synchronisation).
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      }
      close(fds[1]);
      char buf[65536];
      while (std::chrono::steady_clock::now() < end) {
        if (read(fds[0], buf, sizeof buf) <= 0) break;
      }
      close(fds[0]);
      kill(feeder, SIGKILL);
      waitpid(feeder, nullptr, 0);
    } else if (verb == "wait-file") {
      WaitForFile(ExpandEnv(rest));
    } else if (verb == "hang") {
      if (rest == "stubborn") signal(SIGTERM, SIG_IGN);
      for (;;) pause();
    } else if (verb == "spew") {
      long long n = std::atoll(rest.c_str());
      std::string chunk(8191, 'x');
      chunk += '\n';
      while (n > 0) {
        std::cout.write(chunk.data(), std::min<long long>(n, 8192));
        n -= 8192;
      }
      std::cout << std::endl;
    } else if (verb == "cost") {
      std::cout << "conclave-cost-usd: " << rest << std::endl;
    } else if (verb == "grandchild") {
      pid_t p = fork();
      if (p == 0) {
        signal(SIGTERM, SIG_IGN);  // only SIGKILL of the group ends it
        for (;;) pause();
      }
      std::ofstream(rest) << p;
    } else if (verb == "linger") {
      // A member of the worker's process group that outlives it: it holds stdout until the
      // worker has exited, then lets go of every pipe and execs with no environment (so no
      // sweep by environment finds it), leaving its pid in the file named.
      int gone[2];
      if (pipe(gone) != 0) return 1;
      std::cout.flush();
      pid_t p = fork();
      if (p == 0) {
        close(gone[1]);
        char b;
        while (read(gone[0], &b, 1) < 0 && errno == EINTR) {
        }  // EOF: the worker has exited
        int null = open("/dev/null", O_RDWR);
        for (int fd = 0; fd < 3; ++fd) dup2(null, fd);
        char arg0[] = "sleep", arg1[] = "600";
        char* av[] = {arg0, arg1, nullptr};
        char* ev[] = {nullptr};
        execve("/bin/sleep", av, ev);
        _exit(127);
      }
      close(gone[0]);  // the write end stays open until this process exits
      std::ofstream(rest) << p;
    } else if (verb == "escapee") {
      int fds[2];
      if (pipe(fds) != 0) return 1;
      pid_t mid = fork();
      if (mid == 0) {
        setsid();
        if (fork() == 0) {
          signal(SIGTERM, SIG_IGN);
          pid_t self = getpid();
          ssize_t wn = write(fds[1], &self, sizeof self);
          (void)wn;
          close(fds[1]);
          for (;;) pause();
        }
        _exit(0);
      }
      close(fds[1]);
      pid_t escaped = 0;
      ssize_t rn = read(fds[0], &escaped, sizeof escaped);
      (void)rn;
      close(fds[0]);
      waitpid(mid, nullptr, 0);
      std::ofstream(rest) << escaped;
    } else if (verb == "on-term") {
      static std::string term_file;
      term_file = rest;
      signal(SIGTERM, [](int) {
        int fd = open(term_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
          ssize_t wn = write(fd, "graceful\n", 9);
          (void)wn;
          close(fd);
        }
        _exit(0);
      });
    } else if (verb == "write") {
      std::istringstream w(rest);
      std::string file, text;
      w >> file;
      std::getline(w, text);
      std::ofstream(file) << text << "\n";
    } else if (verb == "append") {
      std::istringstream w(rest);
      std::string file, text;
      w >> file;
      std::getline(w, text);
      if (!text.empty() && text[0] == ' ') text.erase(0, 1);
      std::ofstream(file, std::ios::app) << text << "\n";
    } else if (verb == "changes") {
      changes.push_back(rest);
    } else if (verb == "status") {
      status = rest;
    } else if (verb == "blockers") {
      blockers = rest;
    } else if (verb == "no-contract") {
      contract = false;
    } else if (verb == "print-env") {
      const char* v = std::getenv(rest.c_str());
      std::cout << rest << "=" << (v ? v : "") << std::endl;
    } else if (verb == "print-cwd") {
      char cwd[4096];
      std::cout << "CWD=" << (getcwd(cwd, sizeof cwd) ? cwd : "?") << std::endl;
    } else if (verb == "try-cli") {
      std::cout << TryCli(rest) << std::endl;
    } else if (verb == "save-env") {
      std::istringstream w(rest);
      std::string name, file;
      w >> name >> file;
      const char* v = std::getenv(name.c_str());
      std::ofstream(file) << (v ? v : "");
    } else if (verb == "leak-env") {
      const char* v = std::getenv(rest.c_str());
      LeakEverywhere(v ? v : "");
    } else if (verb == "exfiltrate") {
      const char* v = std::getenv(rest.c_str());
      std::cout << TryCli("env send --type status --subject leak --body " + std::string(v ? v : ""))
                << std::endl;
    } else if (verb == "send-done") {
      const char* cli = std::getenv("CONCLAVE_CLI");
      if (!cli) {
        std::cerr << "CONCLAVE_CLI not set" << std::endl;
        return 9;
      }
      pid_t p = fork();
      if (p == 0) {
        execl(cli, cli, "send", "--type", "worker_done", "--subject", "fake worker done",
              "--body", "reported by the worker itself", static_cast<char*>(nullptr));
        _exit(127);
      }
      int st = 0;
      waitpid(p, &st, 0);
      std::cout << "send-done exit " << (WIFEXITED(st) ? WEXITSTATUS(st) : -1) << std::endl;
    } else if (verb == "exit") {
      exit_code = std::atoi(rest.c_str());
      contract = false;
      break;
    } else if (verb == "fail-until") {
      std::istringstream w(rest);
      int n = 0;
      std::string file;
      w >> n >> file;
      if (Bump(file) <= n) {
        std::cerr << "transient failure" << std::endl;
        return 3;
      }
    } else if (verb == "hang-once") {
      // First run: create the marker and hang (to be killed); later runs go on.
      if (!std::ifstream(rest)) {
        std::ofstream(rest, std::ios::app) << getpid() << "\n";
        std::cout << "hanging once" << std::endl;
        for (;;) pause();
      }
    } else if (verb == "sequence") {
      // sequence FILE step1|step2|...: the Nth run takes step N (the last repeats).
      //   ok | fail:MSG (contract FAIL) | exit:N:MSG (MSG on stderr, exit N) | hang | json:TEXT
      std::istringstream w(rest);
      std::string file, steps;
      w >> file;
      std::getline(w, steps);
      if (!steps.empty() && steps[0] == ' ') steps.erase(0, 1);
      std::vector<std::string> list;
      std::string item;
      std::istringstream split(steps);
      while (std::getline(split, item, '|')) list.push_back(item);
      int n = Bump(file);
      std::string step = list.empty() ? "ok" : list[std::min<size_t>(n, list.size()) - 1];
      if (step.rfind("fail:", 0) == 0) {
        status = "FAIL";
        // Volatile details (pid, address) differ per run; the fingerprint must not.
        blockers = step.substr(5) + " (pid " + std::to_string(getpid()) + " at 0x7ffd" +
                   std::to_string(getpid() * 7919 % 100000) + ")";
      } else if (step.rfind("exit:", 0) == 0) {
        auto colon = step.find(':', 5);
        std::cerr << step.substr(colon + 1) << " [pid " << getpid() << "]" << std::endl;
        return std::atoi(step.substr(5, colon - 5).c_str());
      } else if (step == "hang") {
        for (;;) pause();
      } else if (step.rfind("json:", 0) == 0) {
        std::cout << step.substr(5) << std::endl;
        contract = false;
      }
    } else if (verb == "try-read") {
      int fd = open(rest.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        std::cout << "READ[" << rest << "] error=" << std::strerror(errno) << std::endl;
      } else {
        char buf[4096];
        ssize_t n, total = 0;
        while ((n = read(fd, buf, sizeof buf)) > 0) total += n;
        close(fd);
        if (n < 0) {
          std::cout << "READ[" << rest << "] error=" << std::strerror(errno) << std::endl;
        } else {
          std::cout << "READ[" << rest << "] ok " << total << " bytes" << std::endl;
        }
      }
    } else if (verb == "try-write") {
      int fd = open(rest.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      bool ok = fd >= 0 && write(fd, "written by the worker\n", 22) == 22;
      int err = errno;
      if (fd >= 0) close(fd);
      std::cout << "WRITE[" << rest << "] "
                << (ok ? std::string("ok") : "error=" + std::string(std::strerror(err))) << std::endl;
    } else if (verb == "sh") {
      std::cout.flush();
      pid_t p = fork();
      if (p == 0) {
        execl("/bin/sh", "sh", "-c", rest.c_str(), static_cast<char*>(nullptr));
        _exit(127);
      }
      int st = 0;
      waitpid(p, &st, 0);
      std::cout << "SH[" << rest << "] exit=" << (WIFEXITED(st) ? WEXITSTATUS(st) : -1)
                << std::endl;
    } else if (verb == "count") {
      Bump(rest);
    } else if (verb == "pidfile") {
      std::ofstream(rest, std::ios::app) << getpid() << "\n";
    } else if (verb == "save-brief") {
      std::ofstream(rest, std::ios::binary) << brief;
    }
  }
  if (contract) {
    std::cout << "SUMMARY: " << status << " fake worker finished\n"
              << "EVIDENCE: ran the fake worker\n"
              << "CHANGES:\n";
    if (changes.empty()) std::cout << "none\n";
    for (const auto& c : changes) {
      // A name with a space is written in backticks, as workers do.
      bool space = c.find(' ') != std::string::npos;
      std::cout << "- " << (space ? "`" + c + "`" : c) << ": changed\n";
    }
    std::cout << "RISKS: none\n"
              << "BLOCKERS: " << blockers << "\n";
  }
  std::cout.flush();
  return exit_code;
}
