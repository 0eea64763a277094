// Integration: the bubblewrap sandbox (issue 10, item 6) with real bwrap and a real daemon. A
// fake worker under a "sandbox": "bwrap" profile tries to read the database and the config,
// to write outside its worktree and into the repository's hooks, and to reach the daemon
// through /proc — and still reports through the API and commits in its linked worktree.
// Hidden from the ordinary run; tests/CMakeLists.txt runs it as its own test, which reports
// SKIPPED (exit 77) where bwrap cannot run (not installed, no namespaces).
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "daemon_fixture.h"
#include "worker_waits.h"

using conclave::testing::DaemonFixture;
using conclave::testing::RunProgram;
using conclave::testing::WaitFor;
using json = nlohmann::json;
using namespace conclave::testing::waits;
using namespace std::chrono_literals;

namespace {

void SkipUnlessBwrapRuns() {
  auto r = RunProgram({"/bin/sh", "-c",
                       "command -v bwrap >/dev/null && bwrap --ro-bind / / --dev /dev --proc /proc "
                       "--unshare-pid --die-with-parent --new-session true"});
  if (r.exit_code != 0) {
    std::cerr << "SKIPPED: bubblewrap cannot run here: " << r.err << "\n";
    std::exit(77);
  }
}

void Git(const std::string& dir, const std::string& args) {
  auto r = RunProgram({"/bin/sh", "-c",
                       "cd '" + dir + "' && git -c user.email=t@x -c user.name=t " + args});
  INFO("git " << args << ": " << r.err);
  REQUIRE(r.exit_code == 0);
}

std::string Line(const std::string& out, const std::string& prefix) {
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) {
    if (l.rfind(prefix, 0) == 0) return l;
  }
  return "(no line " + prefix + ")";
}

// Writes the "boxed" fake-worker profile (sandbox bwrap) and, with `open`, an "open" one
// without the sandbox.
void WriteBoxed(DaemonFixture& d, const std::string& family, bool open) {
  auto p = d.FakeProfile("boxed", family);
  p["sandbox"] = "bwrap";
  d.WriteProfile("boxed", p);
  if (open) d.WriteProfile("open", d.FakeProfile("open", family));
}

// A daemon with a "boxed" (bwrap) fake-worker profile and terminal w1 in DIR/work (the
// worker's conclave CLI given when it should call the API); returns the work directory.
std::string StartBoxed(DaemonFixture& d, bool with_cli = false) {
  auto p = d.FakeProfile("boxed", "fakefam");
  p["sandbox"] = "bwrap";
  if (with_cli) p["env"] = {{"CONCLAVE_CLI", CONCLAVE_BIN}};
  d.WriteProfile("boxed", p);
  d.Start();
  std::string work = d.dir() + "/work";
  std::filesystem::create_directories(work);
  d.CliJson({"terminal", "create", "--profile", "boxed", "--handle", "w1", "--cwd", work});
  return work;
}

// Every process below pid (from /proc: pid -> ppid).
std::vector<pid_t> Descendants(pid_t root) {
  std::map<pid_t, pid_t> parent;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream st(e.path() / "stat");
    std::string line;
    std::getline(st, line);
    auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    parent[std::atoi(name.c_str())] = ppid;
  }
  std::vector<pid_t> out;
  for (const auto& [pid, ppid] : parent) {
    for (pid_t p = ppid; p > 1; p = parent.count(p) ? parent[p] : 0) {
      if (p == root) {
        out.push_back(pid);
        break;
      }
    }
  }
  return out;
}

TEST_CASE("a sandboxed worker cannot see the daemon's state or config, writes only its worktree, "
          "and still reports and commits",
          "[.][sandbox]") {
  SkipUnlessBwrapRuns();
  DaemonFixture d;
  // The config lives outside /tmp (which the sandbox replaces wholesale), next to files the
  // worker may read, so what hides it is the rule for the config's directory.
  std::string conf_dir = std::string(CONCLAVE_BINARY_DIR) + "/sandbox-conf-" + std::to_string(getpid());
  std::string conf = conf_dir + "/config.json";
  std::filesystem::create_directories(conf_dir);
  std::ofstream(conf) << "{\"tcp_token\": \"config-secret-marker\"}";
  struct RemoveAfter {
    std::string dir;
    ~RemoveAfter() { std::filesystem::remove_all(dir); }
  } remove_conf{conf_dir};
  std::string readable = std::string(CONCLAVE_BINARY_DIR) + "/CMakeCache.txt";
  std::string repo = d.dir() + "/repo", wt = d.dir() + "/wt";
  std::filesystem::create_directories(repo);
  Git(repo, "init -q -b main . && echo hi > a.txt && git add a.txt && git -c user.email=t@x -c "
            "user.name=t commit -qm init && git worktree add -q -b feature ../wt");
  std::string escape = std::string(CONCLAVE_BINARY_DIR) + "/sandbox_escape_probe.txt";
  std::filesystem::remove(escape);
  std::string tmp_file = "/tmp/conclave-sandbox-private-" + std::to_string(getpid()) + ".txt";
  auto p = d.FakeProfile("boxed", "fakefam");
  p["sandbox"] = "bwrap";
  p["env"] = {{"CONCLAVE_CLI", CONCLAVE_BIN}};
  d.WriteProfile("boxed", p);
  d.Start({"--config", conf});
  d.CliJson({"terminal", "create", "--profile", "boxed", "--handle", "w1", "--cwd", wt});
  std::string db = d.state_dir() + "/conclave.db";
  std::string proc_db = "/proc/" + std::to_string(d.pid()) + "/root" + db;
  std::string brief =
      "FAKE: try-read " + db + "\n" +
      "FAKE: try-read " + conf + "\n" +
      "FAKE: try-read " + readable + "\n" +
      "FAKE: try-read " + proc_db + "\n" +
      "FAKE: try-read " + d.dir() + "/daemon.log\n" +
      "FAKE: try-write " + escape + "\n" +
      "FAKE: try-write " + repo + "/.git/hooks/post-commit\n" +
      "FAKE: try-write " + repo + "/a.txt\n" +
      "FAKE: try-write " + d.dir() + "/dropped.txt\n" +
      "FAKE: try-write " + wt + "/inside.txt\n" +
      "FAKE: try-write " + tmp_file + "\n" +
      "FAKE: sh git add inside.txt && git -c user.email=w@x -c user.name=worker commit -qm "
      "worker-commit\n" +
      "FAKE: try-cli env --socket " + d.socket() +
      " send --type status --to coordinator --subject sandboxed-hello\n" +
      "FAKE: sh echo forged-result >> " + d.state_dir() + "/dispatches/$CONCLAVE_DISPATCH_ID/stdout.log\n";
  std::string t =
      d.CliJson({"task", "create", "--brief", "-"}, brief)["task"]["id"].get<std::string>();
  d.CliJson({"dispatch", "--task", t, "--to", "w1"});
  auto waited = d.CliJson({"wait", "--task", t, "--types", "worker_done", "--from", "conclaved",
                           "--after", "0", "--timeout-ms", "30000"});
  json done;
  for (const auto& m : waited["messages"]) {
    if (m["from"] == "conclaved") done = m;
  }
  REQUIRE(!done.is_null());
  std::string out =
      json::parse(done["payload_json"].get<std::string>())["result"]["text"].get<std::string>();
  INFO(out);
  // Not visible: the database (also not through the daemon's /proc root), the config, the
  // directory holding the socket.
  CHECK(Line(out, "READ[" + db + "]").find("error=") != std::string::npos);
  CHECK(Line(out, "READ[" + conf + "]").find("error=") != std::string::npos);
  CHECK(Line(out, "READ[" + proc_db + "]").find("error=") != std::string::npos);
  CHECK(Line(out, "READ[" + d.dir() + "/daemon.log]").find("error=") != std::string::npos);
  CHECK(out.find("config-secret-marker") == std::string::npos);
  CHECK(Line(out, "READ[" + readable + "]").find("] ok ") != std::string::npos);  // the rest is readable
  // Not writable: the rest of the filesystem, the repository's hooks and main worktree. What
  // lands on a hidden directory's private view never reaches the real one.
  CHECK(Line(out, "WRITE[" + escape + "]").find("error=") != std::string::npos);
  CHECK(!std::filesystem::exists(escape));
  CHECK(Line(out, "WRITE[" + repo + "/.git/hooks/post-commit]").find("error=") !=
        std::string::npos);
  CHECK(!std::filesystem::exists(repo + "/.git/hooks/post-commit"));
  CHECK(RunProgram({"/bin/cat", repo + "/a.txt"}).out == "hi\n");
  CHECK(!std::filesystem::exists(d.dir() + "/dropped.txt"));
  CHECK(!std::filesystem::exists(tmp_file));
  // Writable: its worktree (and a private /tmp); a commit in the linked worktree lands.
  CHECK(Line(out, "WRITE[" + wt + "/inside.txt]") == "WRITE[" + wt + "/inside.txt] ok");
  CHECK(Line(out, "WRITE[" + tmp_file + "]") == "WRITE[" + tmp_file + "] ok");
  CHECK(Line(out, "SH[git add").find("exit=0") != std::string::npos);
  auto log = RunProgram({"/bin/sh", "-c", "cd '" + wt + "' && git log --format=%s -1"});
  CHECK(log.out == "worker-commit\n");
  // The files the daemon reads back (its result is parsed from stdout.log) are not the worker's.
  std::string forged = Line(out, "SH[echo forged-result");
  CHECK(forged.find("] exit=") != std::string::npos);
  CHECK(forged.find("] exit=0") == std::string::npos);
  CHECK(conclave::testing::FilesContaining(d.state_dir() + "/dispatches", "forged-result\n").empty());
  // The API is reachable through the bound socket, with a worker's rights.
  CHECK(Line(out, "TRY[").find(" exit=0 ") != std::string::npos);
  auto inbox = d.CliJson({"inbox", "--task", t, "--limit", "50"});
  bool hello = false;
  for (const auto& m : inbox["messages"]) {
    if (m["subject"] == "sandboxed-hello") hello = m["from"] == "w1";
  }
  CHECK(hello);
}

// A sandboxed worker writes its dispatch directory (not the logs the daemon reads back) and
// its repository: files it plants there are read by the daemon's helper threads, by its loop
// at the next dispatch's start, and by recovery.
TEST_CASE("what a sandboxed worker plants in its dispatch directory or repository neither leaks "
          "a hidden file into its result nor stalls the daemon",
          "[.][sandbox]") {
  SkipUnlessBwrapRuns();
  DaemonFixture d;
  WriteBoxed(d, "fakefam", false);
  d.Start();
  std::string work = d.dir() + "/work", repo = d.dir() + "/repo";
  std::filesystem::create_directories(work);
  std::filesystem::create_directories(repo);
  Git(repo, "init -q -b main . && echo hi > a.txt && git add a.txt && git -c user.email=t@x -c "
            "user.name=t commit -qm init");
  d.CliJson({"terminal", "create", "--profile", "boxed", "--handle", "w1", "--cwd", work});
  d.CliJson({"terminal", "create", "--profile", "boxed", "--handle", "w2", "--cwd", repo});
  // In the state directory, which the sandbox hides.
  std::string secret = d.state_dir() + "/hidden-probe.txt";
  std::ofstream(secret) << "HIDDEN-STATE-MARKER\n";
  auto run = [&](const std::string& to, const std::string& brief) {
    std::string t =
        d.CliJson({"task", "create", "--brief", "-"}, brief)["task"]["id"].get<std::string>();
    d.CliJson({"dispatch", "--task", t, "--to", to});
    auto waited = d.CliJson({"wait", "--task", t, "--types", "worker_done", "--from",
                             "conclaved", "--after", "0", "--timeout-ms", "60000"});
    REQUIRE(waited["messages"].size() == 1);
    return json::parse(waited["messages"][0]["payload_json"].get<std::string>())["result"]["text"]
        .get<std::string>();
  };
  const std::string dir = d.state_dir() + "/dispatches/$CONCLAVE_DISPATCH_ID";
  // Over 16 KiB of output: the result is gathered on the helpers, which stitch tail segments.
  std::string out = run("w1", "FAKE: sh ln -s " + secret + " " + dir + "/stdout.log.tail.1\n" +
                                  "FAKE: spew 20000\nFAKE: print after-spew\n");
  INFO(out);
  CHECK(Line(out, "SH[ln -s").find("] exit=0") != std::string::npos);  // it was planted
  CHECK(out.find("HIDDEN-STATE-MARKER") == std::string::npos);
  CHECK(conclave::testing::FilesContaining(d.state_dir() + "/dispatches", "HIDDEN-STATE-MARKER")
            .empty());
  // A FIFO where a segment or stdout.log's tail would be: the helper that stitches and reads
  // does not wait on it — this run's result arrives, and so does the next big one's.
  out = run("w1", "FAKE: sh mkfifo " + dir + "/transcript.log.tail.1 " + dir +
                      "/stdout.log.tail.1\nFAKE: spew 20000\nFAKE: print after-fifo\n");
  CHECK(Line(out, "SH[mkfifo").find("] exit=0") != std::string::npos);
  CHECK(out.find("after-fifo") != std::string::npos);
  CHECK(run("w1", "FAKE: spew 20000\nFAKE: print helpers-free\n").find("helpers-free") !=
        std::string::npos);
  // The branch ref a FIFO: the next dispatch's start reads HEAD on the loop, and the loop
  // goes on.
  out = run("w2", "FAKE: sh rm .git/refs/heads/main && mkfifo .git/refs/heads/main\n");
  CHECK(Line(out, "SH[rm .git").find("] exit=0") != std::string::npos);
  CHECK(run("w2", "FAKE: print started-on-fifo-ref\n").find("started-on-fifo-ref") !=
        std::string::npos);
}

TEST_CASE("cancelling a sandboxed worker ends everything inside its namespace", "[.][sandbox]") {
  SkipUnlessBwrapRuns();
  DaemonFixture d;
  std::string work = StartBoxed(d);
  // A grandchild and the worker itself ignore SIGTERM.
  std::string t = d.CliJson({"task", "create", "--brief", "-"},
                            "FAKE: grandchild /tmp/gc\nFAKE: try-write " + work +
                                "/started\nFAKE: hang stubborn\n")["task"]["id"]
                      .get<std::string>();
  d.CliJson({"dispatch", "--task", t, "--to", "w1"});
  REQUIRE(WaitFor([&] { return std::filesystem::exists(work + "/started"); }, 20s));
  pid_t bwrap = d.CliJson({"task", "show", t})["dispatches"][0]["pid"].get<pid_t>();
  REQUIRE(bwrap > 0);
  auto inside = Descendants(bwrap);
  INFO("bwrap " << bwrap << " has " << inside.size() << " descendants");
  REQUIRE(inside.size() >= 3);  // the namespace's init, the worker, its grandchild
  d.CliJson({"task", "cancel", t});
  CHECK(WaitFor([&] { return ProcessGone(bwrap); }, 20s));
  for (pid_t pid : inside) {
    INFO(pid);
    CHECK(WaitFor([&] { return ProcessGone(pid); }, 5s));
  }
}

// The daemon's own socket is not inside the sandbox at all: what is bound at its path is a
// socket of this dispatch, and whoever comes through it is this dispatch's worker — also a
// process that is not the daemon's descendant, which on the daemon's socket is the coordinator.
TEST_CASE("a sandboxed worker reaches the daemon only through its dispatch's own socket",
          "[.][sandbox]") {
  SkipUnlessBwrapRuns();
  DaemonFixture d;
  std::string work = StartBoxed(d, true);
  std::string other =
      d.CliJson({"task", "create", "--brief", "-"}, "other")["task"]["id"].get<std::string>();
  std::string gid =
      d.CliJson({"gate", "create", "--task", other, "--question", "ship it?"})["id"].get<std::string>();
  std::string brief;
  for (const char* mode : {"env", "setsid"}) {
    brief += std::string("FAKE: try-cli ") + mode + " --socket " + d.socket() +
             " gate resolve " + gid + " --decision approve\n";
  }
  brief += "FAKE: try-write " + work + "/started\nFAKE: wait-file " + work + "/go\n";
  std::string t = d.CliJson({"task", "create", "--brief", "-"}, brief)["task"]["id"].get<std::string>();
  d.CliJson({"dispatch", "--task", t, "--to", "w1"});
  REQUIRE(WaitFor([&] { return std::filesystem::exists(work + "/started"); }, 20s));
  std::string did = d.CliJson({"task", "show", t})["dispatches"][0]["id"].get<std::string>();
  std::string own = d.state_dir() + "/sockets/d" + did + ".sock";
  REQUIRE(std::filesystem::exists(own));
  // This test process is the coordinator on the daemon's socket; through the dispatch's own
  // socket it is that dispatch's worker: refused the gate, its report stored under w1.
  auto resolve = RunProgram({CONCLAVE_BIN, "--socket", own, "gate", "resolve", gid, "--decision",
                             "approve"});
  CHECK(resolve.exit_code != 0);
  CHECK(resolve.err.find("may not") != std::string::npos);
  auto sent = RunProgram({CONCLAVE_BIN, "--socket", own, "send", "--type", "status", "--to",
                          "coordinator", "--subject", "through-own-socket"});
  INFO(sent.err);
  CHECK(sent.exit_code == 0);
  std::ofstream(work + "/go") << "go";
  auto done = WaitDone(d, t);
  std::string out = Payload(done)["result"]["text"].get<std::string>();
  INFO(out);
  int tries = 0;
  std::istringstream lines(out);
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("TRY[", 0) != 0) continue;
    ++tries;
    CHECK(l.find(" exit=0 ") == std::string::npos);
    CHECK(l.find("may not") != std::string::npos);
  }
  CHECK(tries == 2);
  auto gates = d.CliJson({"gate", "list", "--open"});
  INFO(gates.dump());
  bool open = false;
  for (const auto& g : gates["gates"]) open |= g["id"] == gid;
  CHECK(open);
  // The send went in as the worker's — not as the coordinator's.
  std::string from;
  auto mine = d.CliJson({"inbox", "--types", "status", "--limit", "200"});
  INFO(sent.out << mine.dump());
  for (const auto& m : mine["messages"]) {
    if (m["subject"] == "through-own-socket") from = m["from"].get<std::string>();
  }
  CHECK(from == "w1");
  // Gone with its dispatch; connecting now gets nothing.
  CHECK(WaitFor([&] { return !std::filesystem::exists(own); }, 10s));
  CHECK(RunProgram({CONCLAVE_BIN, "--socket", own, "status"}).exit_code != 0);
}

// bwrap forwards no signal: a SIGTERM to it kills it, and --die-with-parent then ends the
// worker with SIGKILL. The stop must reach the worker inside, so it can finish cleanly.
TEST_CASE("a stopped sandboxed worker gets SIGTERM first and stops cleanly", "[.][sandbox]") {
  SkipUnlessBwrapRuns();
  DaemonFixture d;
  std::string work = StartBoxed(d);
  std::string t = d.CliJson({"task", "create", "--brief", "-"},
                            "FAKE: on-term " + work + "/graceful\nFAKE: try-write " + work +
                                "/started\nFAKE: hang\n")["task"]["id"]
                      .get<std::string>();
  d.CliJson({"dispatch", "--task", t, "--to", "w1"});
  REQUIRE(WaitFor([&] { return std::filesystem::exists(work + "/started"); }, 20s));
  d.CliJson({"task", "cancel", t});
  auto done = Payload(WaitDone(d, t));
  INFO(done.dump());
  CHECK(done["state"] == "cancelled");
  CHECK(done["failure_kind"] == "cancelled");
  std::string said;
  std::ifstream(work + "/graceful") >> said;
  CHECK(said == "graceful");
}

TEST_CASE("doctor says bubblewrap runs here and recommends the sandbox to a CLI profile without it",
          "[.][sandbox]") {
  SkipUnlessBwrapRuns();
  DaemonFixture d;
  WriteBoxed(d, "fam", true);
  d.Start();
  auto r = d.Cli({"doctor"});
  INFO(r.out << r.err);
  CHECK(r.out.find("sandbox: bubblewrap runs here") != std::string::npos);
  CHECK(Line(r.out, "READY     boxed") != "(no line READY     boxed)");
  CHECK(r.out.find("ok   sandbox: bwrap runs here") != std::string::npos);
  CHECK(r.out.find("set \"sandbox\": \"bwrap\" in open's profile") != std::string::npos);
  CHECK(r.out.find("in boxed's profile") == std::string::npos);
}

TEST_CASE("doctor says when a sandboxed profile cannot have its sandbox", "[sandbox-doctor]") {
  DaemonFixture d;
  auto boxed = d.FakeProfile("boxed", "fam");
  boxed["sandbox"] = "bwrap";
  d.WriteProfile("boxed", boxed);
  d.SetLauncher({}, {"PATH=/nonexistent-conclave-path"});  // no bwrap to be found
  d.Start();
  auto r = d.Cli({"doctor"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("sandbox: bubblewrap cannot run here: bwrap is not on conclaved's PATH") !=
        std::string::npos);
  CHECK(r.out.find("NOT READY boxed") != std::string::npos);
  CHECK(r.out.find("MISSING sandbox: bwrap asked for") != std::string::npos);
  CHECK(r.out.find("fix: install bubblewrap") != std::string::npos);
}

}  // namespace

// The daemon runs git in the worker's repository after the worker (the claims check, partial
// work, flow commits), outside the sandbox. A worker may not point that git at a git dir of
// its own, whose config would run its code there: not by rewriting a linked worktree's .git
// file, nor by planting a commondir file in a main repository's .git.
TEST_CASE("a sandboxed worker cannot make the daemon's git run its code", "[.][sandbox]") {
  SkipUnlessBwrapRuns();
  DaemonFixture d;
  auto p = d.FakeProfile("boxed", "fakefam");
  p["sandbox"] = "bwrap";
  d.WriteProfile("boxed", p);
  d.Start();
  std::string repo = d.dir() + "/repo", wt = d.dir() + "/wt";
  std::filesystem::create_directories(repo);
  Git(repo, "init -q -b main . && echo hi > a.txt && git add a.txt && git -c user.email=t@x -c "
            "user.name=t commit -qm init && git worktree add -q -b feature ../wt");
  d.CliJson({"terminal", "create", "--profile", "boxed", "--handle", "in-wt", "--cwd", wt});
  d.CliJson({"terminal", "create", "--profile", "boxed", "--handle", "in-main", "--cwd", repo});
  // A git dir of the worker's making: the repository's objects and refs, and a config whose
  // file-system monitor is a script that leaves a mark where the sandbox cannot write.
  auto fake_git_dir = [](const std::string& src, const std::string& mark) {
    return "FAKE: sh mkdir .x && cp -r " + src + "/objects " + src + "/refs " + src +
           "/HEAD .x/ && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = "
           "%s/.x/h\\n' \"$PWD\" > .x/config && printf '#!/bin/sh\\ntouch " + mark +
           "\\n' > .x/h && chmod +x .x/h\n";
  };
  struct Case {
    std::string terminal, mark, brief;
  };
  std::vector<Case> cases = {
      {"in-wt", d.dir() + "/pwned-wt",
       fake_git_dir(repo + "/.git", d.dir() + "/pwned-wt") +
           "FAKE: sh printf 'gitdir: %s/.x\\n' \"$PWD\" > .git\n"},
      {"in-main", d.dir() + "/pwned-main",
       fake_git_dir(repo + "/.git", d.dir() + "/pwned-main") +
           "FAKE: sh echo \"$PWD/.x\" > .git/commondir\n"}};
  for (const auto& c : cases) {
    INFO(c.terminal);
    // The mark is writable outside the sandbox only: the script runs the moment any git run
    // outside reads the planted config. The change claimed makes the daemon check it with git.
    std::string brief = c.brief + "FAKE: write claimed.txt changed\nFAKE: changes claimed.txt\n";
    std::string t =
        d.CliJson({"task", "create", "--brief", "-"}, brief)["task"]["id"].get<std::string>();
    d.CliJson({"dispatch", "--task", t, "--to", c.terminal});
    auto done = WaitDone(d, t);
    INFO(done.dump());
    // The commands ran (the planting itself may fail: the worktree's .git is read-only)...
    CHECK(Payload(done)["result"]["text"].get<std::string>().find("SH[mkdir .x") !=
          std::string::npos);
    // ...and nothing of the worker's ran outside.
    CHECK(!std::filesystem::exists(c.mark));
  }
  // The planted redirect in the main repository is refused, and the log says what to remove.
  CHECK(d.daemon_log().find("commondir exists") != std::string::npos);
  std::filesystem::remove(repo + "/.git/commondir");
  // From the main repository, the other worktrees' git dirs are not the worker's either: the
  // linked worktree's commondir stays what git wrote.
  std::string link = repo + "/.git/worktrees/wt/commondir";
  std::string before = RunProgram({"/bin/cat", link}).out;
  std::string t = d.CliJson({"task", "create", "--brief", "-"},
                            "FAKE: sh echo \"$PWD/.x\" > " + link + "\n")["task"]["id"]
                      .get<std::string>();
  d.CliJson({"dispatch", "--task", t, "--to", "in-main"});
  std::string out = Payload(WaitDone(d, t))["result"]["text"].get<std::string>();
  INFO(out);
  CHECK(out.find("commondir] exit=0") == std::string::npos);
  CHECK(RunProgram({"/bin/cat", link}).out == before);
}

// The daemon runs git in a sandboxed terminal's directory after (and while) its worker runs:
// the claims check, the dirty-file snapshot, partial work. A worker can make git there read a
// config of its own — a repository made at its cwd (a subfolder of a repository, or no
// repository at all), or, from a terminal at the repository's top, in another terminal's
// subfolder — whose clean filter runs when git re-reads a touched file. That git runs in a
// read-only sandbox without network, so the filter runs with less than the worker had; also
// for an unsandboxed terminal below a sandboxed one.
TEST_CASE("a sandboxed terminal's repository cannot make the daemon's git run code outside",
          "[.][sandbox]") {
  SkipUnlessBwrapRuns();
  DaemonFixture d;
  WriteBoxed(d, "fakefam", true);  // "open" is not sandboxed
  d.Start();
  // The repository outside /tmp, which the sandbox replaces wholesale: inside, git stops at
  // that mount boundary (so for the worker, a directory in /tmp is in no repository).
  std::string repo =
      std::string(CONCLAVE_BINARY_DIR) + "/sandbox-plant-" + std::to_string(getpid());
  struct RemoveAfter {
    std::string dir;
    ~RemoveAfter() { std::filesystem::remove_all(dir); }
  } remove_repo{repo};
  std::string plain = d.dir() + "/plain";
  std::filesystem::create_directories(repo + "/sub");
  std::filesystem::create_directories(plain);
  for (const auto& f : {repo + "/sub/f.txt", repo + "/sub/g.txt", plain + "/f.txt"}) {
    std::ofstream(f) << "hi\n";
  }
  Git(repo, "init -q -b main . && git add -A && git -c user.email=t@x -c user.name=t commit -qm i");
  for (const auto& [handle, cwd] : {std::pair<std::string, std::string>{"in-top", repo},
                                    {"in-sub", repo + "/sub"},
                                    {"in-plain", plain}}) {
    d.CliJson({"terminal", "create", "--profile", "boxed", "--handle", handle, "--cwd", cwd});
  }
  // An unsandboxed terminal below a sandboxed one: what that worker leaves is there too.
  d.CliJson({"terminal", "create", "--profile", "open", "--handle", "open-sub", "--cwd",
             repo + "/sub"});
  auto run = [&](const std::string& terminal, const std::string& brief) {
    std::string t =
        d.CliJson({"task", "create", "--brief", "-"}, brief)["task"]["id"].get<std::string>();
    d.CliJson({"dispatch", "--task", t, "--to", terminal});
    return Payload(WaitDone(d, t));
  };
  // The confined git works: a new file holds as a claim, an untouched one is caught.
  auto ok = run("in-sub", "FAKE: write new.txt x\nFAKE: changes new.txt\nFAKE: changes g.txt\n");
  INFO(ok.dump());
  CHECK(ok["failure_kind"] == "claim_not_persisted");
  std::string unpersisted = ok["result"]["unpersisted"].dump();
  CHECK(unpersisted.find("g.txt: claimed as changed but identical") != std::string::npos);
  CHECK(unpersisted.find("new.txt") == std::string::npos);
  // A repository of the worker's in `where`, whose clean filter leaves a mark where only a
  // process outside the sandbox can write; then a tracked file touched, so git re-reads it.
  auto plant = [](const std::string& where, const std::string& mark) {
    return "FAKE: sh cd " + where + " && printf '#!/bin/sh\\ntouch " + mark +
           "\\ncat\\n' > h && chmod +x h && git init -q . && git add -A && "
           "git -c user.email=t@x -c user.name=t commit -qm x && "
           "git config filter.x.clean \"$PWD/h\" && echo '* filter=x' > .gitattributes && "
           "touch -m -d 2030-01-01 f.txt\n";
  };
  struct Attack {
    std::string planter, where, victim;
  };
  for (const auto& a : {Attack{"in-sub", repo + "/sub", "in-sub"},
                        Attack{"in-plain", plain, "in-plain"},
                        Attack{"in-top", repo + "/sub", "in-sub"},
                        Attack{"in-top", repo + "/sub", "open-sub"}}) {
    INFO(a.planter << " plants in " << a.where << ", " << a.victim << "'s claims are checked");
    std::string mark = d.dir() + "/pwned-" + a.planter + "-" + a.victim;
    std::string brief = plant(a.where, mark);
    if (a.victim != a.planter) {
      std::string planted = run(a.planter, brief)["result"]["text"].get<std::string>();
      INFO(planted);
      CHECK(Line(planted, "SH[cd").find("exit=0") != std::string::npos);
      brief.clear();
    }
    auto done = run(a.victim, brief + "FAKE: changes f.txt\n");
    std::string out = done["result"]["text"].get<std::string>();
    INFO(out);
    if (a.victim == a.planter) CHECK(Line(out, "SH[cd").find("exit=0") != std::string::npos);
    CHECK(!std::filesystem::exists(mark));
    std::filesystem::remove_all(a.where + "/.git");
  }
}

// The user's runtime directory holds the session bus and systemd's socket: through them a
// worker could start a process outside the sandbox, which the daemon would take for the
// coordinator.
TEST_CASE("a sandboxed worker does not see the user's runtime directory", "[.][sandbox]") {
  SkipUnlessBwrapRuns();
  DaemonFixture d;
  // Outside /tmp, which the sandbox replaces wholesale anyway.
  std::string runtime =
      std::string(CONCLAVE_BINARY_DIR) + "/sandbox-runtime-" + std::to_string(getpid());
  std::filesystem::create_directories(runtime);
  struct RemoveAfter {
    std::string dir;
    ~RemoveAfter() { std::filesystem::remove_all(dir); }
  } remove_runtime{runtime};
  std::ofstream(runtime + "/bus") << "a stand-in for the session bus";
  d.SetLauncher({}, {"XDG_RUNTIME_DIR=" + runtime});
  std::string work = StartBoxed(d);
  std::string t = d.CliJson({"task", "create", "--brief", "-"},
                            "FAKE: try-read " + runtime + "/bus\nFAKE: try-read " + std::string(CONCLAVE_BINARY_DIR) + "/CMakeCache.txt\n")["task"]["id"]
                      .get<std::string>();
  d.CliJson({"dispatch", "--task", t, "--to", "w1"});
  std::string out = Payload(WaitDone(d, t))["result"]["text"].get<std::string>();
  INFO(out);
  CHECK(Line(out, "READ[" + runtime + "/bus]").find("error=") != std::string::npos);
  CHECK(out.find("a stand-in for the session bus") == std::string::npos);
  CHECK(Line(out, "READ[" + std::string(CONCLAVE_BINARY_DIR) + "/CMakeCache.txt]").find("] ok ") !=
        std::string::npos);  // what is beside it stays readable
}
