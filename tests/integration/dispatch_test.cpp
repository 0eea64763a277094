// Integration: terminals, tasks and dispatch of briefs to real child processes (the fake
// worker), supervision, transcripts, redaction, gates and crash recovery.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <thread>

#include "daemon_fixture.h"
#include "worker_waits.h"

using conclave::testing::DaemonFixture;
using conclave::testing::RunResult;
using conclave::testing::WaitFor;
using namespace conclave::testing::waits;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Starts a daemon with one fake-worker profile "fake" (family "fakefam").
void StartWithFake(DaemonFixture& d, int max_concurrent = 1) {
  auto p = d.FakeProfile("fake", "fakefam", max_concurrent);
  p["env"] = {{"CONCLAVE_CLI", CONCLAVE_BIN}};
  d.WriteProfile("fake", p);
  d.Start();
}

std::string CreateTask(DaemonFixture& d, const std::string& brief,
                       std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"task", "create", "--brief", "-"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = d.CliJson(args, brief);
  return r["task"]["id"].get<std::string>();
}

}  // namespace

TEST_CASE("profiles load, and an invalid one is reported with file and field", "[dispatch]") {
  DaemonFixture d;
  d.WriteProfile("good", d.FakeProfile("good", "fam"));
  auto bad = d.FakeProfile("bad", "fam");
  bad["timeout_s"] = "soon";
  d.WriteProfile("bad", bad);
  d.WriteFile("profiles/broken.json", "{ not json");
  d.Start();
  auto r = d.CliJson({"profile", "list"});
  REQUIRE(r["profiles"].size() == 1);
  CHECK(r["profiles"][0]["name"] == "good");
  REQUIRE(r["errors"].size() == 2);
  bool saw_field = false;
  for (const auto& e : r["errors"]) {
    if (e["file"].get<std::string>().find("bad.json") != std::string::npos) {
      CHECK(e["field"] == "timeout_s");
      saw_field = true;
    }
  }
  CHECK(saw_field);
}

TEST_CASE("a dispatch runs the worker, emits dispatch and worker_done, and completes the task",
          "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  auto t = d.CliJson({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  CHECK(t["state"] == "idle");
  CHECK(t["family"] == "fakefam");
  std::string id = CreateTask(d, "do the thing\nFAKE: print-env CONCLAVE_TASK_ID\n"
                                 "FAKE: print-env CONCLAVE_TERMINAL_HANDLE\n",
                              {"--title", "thing", "--role", "tester"});
  auto disp = d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  CHECK(disp["state"] == "running");
  CHECK(disp["terminal"] == "w1");
  auto done = WaitDone(d, id);
  auto p = Payload(done);
  CHECK(p["outcome"] == "succeeded");
  CHECK(p["exit_code"] == 0);
  CHECK(p["task_status"] == "completed");
  CHECK(p["result"]["contract"]["ok"] == true);
  CHECK(p["result"]["contract"]["status"] == "PASS");
  std::string text = p["result"]["text"].get<std::string>();
  CHECK(text.find("CONCLAVE_TASK_ID=" + id) != std::string::npos);
  CHECK(text.find("CONCLAVE_TERMINAL_HANDLE=w1") != std::string::npos);
  auto ev = d.CliJson({"inbox", "--task", id, "--types", "dispatch"});
  CHECK(ev["messages"].size() == 1);
  auto show = d.CliJson({"task", "show", id});
  CHECK(show["task"]["status"] == "completed");
  REQUIRE(show["dispatches"].size() == 1);
  CHECK(show["dispatches"][0]["state"] == "succeeded");
  CHECK(d.CliJson({"terminal", "show", "w1"})["state"] == "idle");
  // The transcript is readable from a byte cursor.
  auto tr = d.CliJson({"terminal", "read", "w1"});
  CHECK(tr["eof"] == true);
  RunResult human = d.Cli({"terminal", "read", "w1", "--cursor", "5"});
  CHECK(human.out.find("SUMMARY") != std::string::npos);
}

TEST_CASE("a missing contract section is a contract violation", "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string id = CreateTask(d, "FAKE: no-contract\nFAKE: print SUMMARY: PASS only this\n");
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  auto p = Payload(WaitDone(d, id));
  CHECK(p["outcome"] == "failed");
  CHECK(p["failure_kind"] == "contract_violation");
  CHECK(p["failure_class"] == "counted");
  CHECK(p["evidence"].get<std::string>().find("EVIDENCE") != std::string::npos);
  CHECK(p["task_status"] == "ready");  // below the breaker threshold it may be re-dispatched
}

TEST_CASE("written != persisted: a writer's claimed change must exist and differ from HEAD",
          "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  std::string repo = d.dir() + "/repo";
  std::filesystem::create_directories(repo);
  REQUIRE(conclave::testing::RunProgram({"/usr/bin/git", "-C", repo, "init", "-q"}).exit_code == 0);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", repo});
  std::string liar = CreateTask(d, "FAKE: changes src/never_written.cpp\n", {"--role", "writer"});
  d.CliJson({"dispatch", "--task", liar, "--to", "w1"});
  auto p = Payload(WaitDone(d, liar));
  CHECK(p["failure_kind"] == "claim_not_persisted");
  CHECK(p["evidence"].get<std::string>().find("never_written.cpp") != std::string::npos);

  std::string honest = CreateTask(d, "FAKE: write made.txt hello\nFAKE: changes made.txt\n",
                                  {"--role", "writer"});
  d.CliJson({"dispatch", "--task", honest, "--to", "w1"});
  CHECK(Payload(WaitDone(d, honest))["outcome"] == "succeeded");
}

TEST_CASE("dispatches queue when every terminal is busy and start in order", "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d, 2);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "a", "--cwd", d.dir()});
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "b", "--cwd", d.dir()});
  std::string gate = d.dir() + "/go";
  // Workers wait for a file so the test controls when they finish.
  std::string brief = "FAKE: wait-file " + gate + "\n";
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(CreateTask(d, brief + "n" + std::to_string(i)));
  std::vector<json> disp;
  for (const auto& id : ids) disp.push_back(d.CliJson({"dispatch", "--task", id, "--to", "@profile:fake"}));
  CHECK(disp[0]["state"] == "running");
  CHECK(disp[1]["state"] == "running");
  CHECK(disp[2]["state"] == "queued");
  CHECK(disp[3]["state"] == "queued");
  CHECK(disp[2]["terminal"] == "");
  d.WriteFile("go", "");
  for (const auto& id : ids) CHECK(Payload(WaitDone(d, id))["outcome"] == "succeeded");
  // Queued ones started in order: dispatch 3 started no later than dispatch 4.
  auto s3 = d.CliJson({"task", "show", ids[2]})["dispatches"][0];
  auto s4 = d.CliJson({"task", "show", ids[3]})["dispatches"][0];
  CHECK(std::stoll(s3["started_unix_ms"].get<std::string>()) <=
        std::stoll(s4["started_unix_ms"].get<std::string>()));
  // A single terminal with a direct handle queues too.
  std::string x = CreateTask(d, "FAKE: wait-file " + d.dir() + "/go2\n");
  std::string y = CreateTask(d, "quick\n");
  CHECK(d.CliJson({"dispatch", "--task", x, "--to", "a"})["state"] == "running");
  CHECK(d.CliJson({"dispatch", "--task", y, "--to", "a"})["state"] == "queued");
  d.WriteFile("go2", "");
  CHECK(Payload(WaitDone(d, y))["outcome"] == "succeeded");
}

TEST_CASE("group addresses resolve against terminals", "[dispatch]") {
  DaemonFixture d;
  d.WriteProfile("p1", d.FakeProfile("p1", "famA"));
  d.WriteProfile("p2", d.FakeProfile("p2", "famB"));
  d.Start();
  std::string wt = d.dir() + "/wt";
  std::filesystem::create_directories(wt);
  d.Cli({"terminal", "create", "--profile", "p1", "--handle", "t1", "--cwd", wt});
  d.Cli({"terminal", "create", "--profile", "p2", "--handle", "t2", "--cwd", d.dir()});
  auto to = [&](const std::string& addr) {
    std::set<std::string> out;
    json sent = d.CliJson({"send", "--to", addr, "--type", "status", "--subject", "s"});
    for (const auto& m : sent["messages"]) {
      out.insert(m["to"].get<std::string>());
    }
    return out;
  };
  CHECK(to("@family:famA") == std::set<std::string>{"t1"});
  CHECK(to("@profile:p2") == std::set<std::string>{"t2"});
  CHECK(to("@worktree:" + wt) == std::set<std::string>{"t1"});
  CHECK(to("@idle") == std::set<std::string>{"t1", "t2"});
  // A closed handle is never reissued and no longer addressable.
  CHECK(d.CliJson({"terminal", "close", "t2"})["state"] == "closed");
  RunResult again = d.Cli({"terminal", "create", "--profile", "p2", "--handle", "t2"});
  CHECK(again.exit_code == 1);
  CHECK(again.err.find("never reissued") != std::string::npos);
  CHECK(d.Cli({"send", "--to", "t2", "--type", "status", "--subject", "s"}).exit_code == 1);
}

TEST_CASE("hard timeout kills the whole process tree, leaving no survivors", "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string pidfile = d.dir() + "/grandchild.pid";
  std::string id = CreateTask(d, "FAKE: grandchild " + pidfile + "\nFAKE: hang stubborn\n");
  d.CliJson({"dispatch", "--task", id, "--to", "w1", "--timeout-s", "1"});
  auto p = Payload(WaitDone(d, id));
  CHECK(p["failure_kind"] == "timeout");
  CHECK(p["failure_class"] == "operational");
  CHECK(p["state"] == "timed_out");
  pid_t grandchild = 0;
  std::ifstream(pidfile) >> grandchild;
  REQUIRE(grandchild > 0);
  CHECK(WaitFor([&] { return ProcessGone(grandchild); }, 5s));
  auto show = d.CliJson({"task", "show", id});
  pid_t worker = show["dispatches"][0]["pid"].get<int>();
  REQUIRE(worker > 0);
  CHECK(ProcessGone(worker));
  // An operational failure retries by itself: a second attempt is queued or ran.
  CHECK(show["dispatches"].size() >= 2);
  d.CliJson({"task", "cancel", id});
}

// A member of the worker's group that still held its output when the worker exited, and let
// go of it before the grace ran out: nothing finds it by its environment (it has none), so
// the group kill at the end of the run is what ends it.
TEST_CASE("a group member that drops its output after the worker exits is killed with the run",
          "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string pidfile = d.dir() + "/linger.pid";
  std::string id = CreateTask(d, "FAKE: linger " + pidfile + "\n");
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  auto p = Payload(WaitDone(d, id));
  CHECK(p["state"] == "succeeded");
  pid_t member = 0;
  std::ifstream(pidfile) >> member;
  REQUIRE(member > 0);
  CHECK(WaitFor([&] { return ProcessGone(member); }, 10s));
  if (!ProcessGone(member)) kill(member, SIGKILL);
}

// A grandchild that called setsid and was re-parented away (to the daemon, as subreaper) is
// not in the worker's process group: signalling the group alone leaves it running forever.
TEST_CASE("a setsid grandchild is stopped on normal completion, timeout, cancel and shutdown",
          "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d, 4);
  for (const char* h : {"w1", "w2", "w3", "w4"}) {
    d.Cli({"terminal", "create", "--profile", "fake", "--handle", h, "--cwd", d.dir()});
  }
  auto escapee = [&](const std::string& name, const std::string& then, const std::string& to,
                     std::vector<std::string> flags) {
    std::string pidfile = d.dir() + "/" + name + ".pid";
    std::string id = CreateTask(d, "FAKE: escapee " + pidfile + "\n" + then);
    std::vector<std::string> args = {"dispatch", "--task", id, "--to", to};
    args.insert(args.end(), flags.begin(), flags.end());
    d.CliJson(args);
    pid_t pid = WaitForMarker(pidfile);
    // It really left: a session of its own (whose group it is in), not the worker's group.
    REQUIRE(getsid(pid) != getsid(0));
    REQUIRE(getpgid(pid) == getsid(pid));
    return std::make_pair(id, pid);
  };
  auto done = escapee("done", "FAKE: print finished\n", "w1", {});
  std::string done_id = done.first;
  pid_t done_pid = done.second;
  CHECK(Payload(WaitDone(d, done_id))["outcome"] == "succeeded");
  CHECK(WaitFor([&] { return ProcessGone(done_pid); }, 10s));

  auto timed = escapee("timed", "FAKE: hang stubborn\n", "w2", {"--timeout-s", "1"});
  std::string timed_id = timed.first;
  pid_t timed_pid = timed.second;
  CHECK(Payload(WaitDone(d, timed_id))["failure_kind"] == "timeout");
  CHECK(WaitFor([&] { return ProcessGone(timed_pid); }, 10s));
  d.CliJson({"task", "cancel", timed_id});

  auto cancelled = escapee("cancel", "FAKE: hang\n", "w3", {});
  std::string cancel_id = cancelled.first;
  pid_t cancel_pid = cancelled.second;
  d.CliJson({"task", "cancel", cancel_id});
  CHECK(WaitFor([&] { return ProcessGone(cancel_pid); }, 10s));

  pid_t stop_pid = escapee("stop", "FAKE: hang\n", "w4", {}).second;
  CHECK(d.Stop() == 0);
  CHECK(WaitFor([&] { return ProcessGone(stop_pid); }, 10s));
}

// The daemon is the escapee's parent once it is re-parented: stopped at the run's end, it is a
// zombie until the daemon reaps it, which it does when SIGCHLD says so (read from a signalfd:
// every thread blocks it, exec/child_registry). A zombie left is a process slot held.
TEST_CASE("a grandchild the daemon stops is reaped and not left a zombie", "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  const std::string pidfile = d.dir() + "/orphan.pid";
  std::string id = CreateTask(d, "FAKE: escapee " + pidfile + "\nFAKE: print finished\n");
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  const pid_t orphan = WaitForMarker(pidfile);
  CHECK(Payload(WaitDone(d, id))["outcome"] == "succeeded");
  // Gone from the process table altogether: not even a zombie of the daemon's.
  // (ProcessGone takes a zombie for gone: the test above does not see one left.)
  const bool reaped = WaitFor([&] { return kill(orphan, 0) != 0 && errno == ESRCH; }, 10s);
  std::string left;
  if (!reaped) std::getline(std::ifstream("/proc/" + std::to_string(orphan) + "/stat"), left);
  INFO("still there: " << left);
  CHECK(reaped);
}

TEST_CASE("megabytes of output are handled with bounded memory and a full transcript",
          "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string id = CreateTask(d, "FAKE: spew 6000000\n");
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  auto m = WaitDone(d, id);
  auto p = Payload(m);
  CHECK(p["outcome"] == "succeeded");
  CHECK(p["result"]["stdout_bytes"].get<int64_t>() > 6000000);
  CHECK(p["result"]["text"].get<std::string>().size() < 100 * 1024);  // bounded
  auto size = std::filesystem::file_size(d.state_dir() + "/dispatches/" +
                                         m["dispatch_id"].get<std::string>() + "/transcript.log");
  CHECK(size > 6000000);
}

TEST_CASE("secrets are redacted from the transcript and the stored result", "[dispatch]") {
  DaemonFixture d;
  std::string secret_file = d.WriteFile("secret.txt", "sk-TEST-abcdef0123456789\n");
  auto p = d.FakeProfile("fake", "fakefam");
  p["env"] = {{"FAKE_API_KEY", "${file:" + secret_file + "}"}};
  d.WriteProfile("fake", p);
  d.Start();
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string id = CreateTask(d, "FAKE: print-env FAKE_API_KEY\nFAKE: print-env CONCLAVE_DISPATCH_TOKEN\n");
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  auto m = WaitDone(d, id);
  std::string all = m.dump();
  CHECK(all.find("sk-TEST-abcdef0123456789") == std::string::npos);
  CHECK(all.find("FAKE_API_KEY=[REDACTED]") != std::string::npos);
  CHECK(all.find("CONCLAVE_DISPATCH_TOKEN=[REDACTED]") != std::string::npos);
  RunResult tr = d.Cli({"terminal", "read", "w1"});
  CHECK(tr.out.find("sk-TEST") == std::string::npos);
  CHECK(tr.out.find("[REDACTED]") != std::string::npos);
  // Nowhere in the state directory either: the database, its WAL (where recent commits live
  // while the daemon runs), transcripts, outputs.
  REQUIRE(std::filesystem::exists(d.state_dir() + "/conclave.db-wal"));
  CHECK(conclave::testing::FilesContaining(d.state_dir(), "sk-TEST-abcdef").empty());
  CHECK(conclave::testing::FilesContaining(d.state_dir(), "[REDACTED]").size() > 0);
}

TEST_CASE("a worker reports worker_done itself with its token, once — a wrong token is refused",
          "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string id = CreateTask(d, "FAKE: send-done\nFAKE: send-done\n");
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  auto done = WaitDone(d, id);
  auto p = Payload(done);
  CHECK(p["outcome"] == "succeeded");
  std::string text = p["result"]["text"].get<std::string>();
  CHECK(text.find("send-done exit 0") != std::string::npos);
  CHECK(text.find("send-done exit 1") != std::string::npos);  // the second is refused
  auto reports = d.CliJson({"inbox", "--task", id, "--types", "worker_done", "--from", "w1"});
  REQUIRE(reports["messages"].size() == 1);
  CHECK(reports["messages"][0]["to"] == "coordinator");
  // A forged report for a finished dispatch is refused with PERMISSION_DENIED.
  RunResult forged = d.Cli({"send", "--type", "worker_done", "--subject", "forged", "--to", "coordinator", "--dispatch",
                            done["dispatch_id"].get<std::string>(), "--token", "0000"});
  CHECK(forged.exit_code == 1);
  CHECK(forged.err.find("permission denied") != std::string::npos);
  auto refusals = d.CliJson({"inbox", "--types", "escalation"});
  CHECK(!refusals["messages"].empty());
}

TEST_CASE("dependencies: pending until deps complete — unknown deps refused", "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string a = CreateTask(d, "first\n");
  std::string b = CreateTask(d, "second\n", {"--deps", a});
  CHECK(d.CliJson({"task", "show", b})["task"]["status"] == "pending");
  RunResult early = d.Cli({"dispatch", "--task", b, "--to", "w1"});
  CHECK(early.exit_code == 1);
  CHECK(early.err.find("pending") != std::string::npos);
  RunResult unknown = d.Cli({"task", "create", "--brief", "-", "--deps", "999"}, "x");
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("999") != std::string::npos);
  d.CliJson({"dispatch", "--task", a, "--to", "w1"});
  WaitDone(d, a);
  CHECK(d.CliJson({"task", "show", b})["task"]["status"] == "ready");
}

TEST_CASE("re-running a coordinator script with idempotency keys resumes a 3-task DAG",
          "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string counter = d.dir() + "/runs";
  auto script = [&] {
    std::string a = d.CliJson({"task", "create", "--brief", "-", "--key", "dag-a"},
                              "FAKE: count " + counter + "\n")["task"]["id"];
    std::string b = d.CliJson({"task", "create", "--brief", "-", "--key", "dag-b", "--deps", a},
                              "FAKE: count " + counter + "\n")["task"]["id"];
    std::string c = d.CliJson({"task", "create", "--brief", "-", "--key", "dag-c", "--deps", b},
                              "FAKE: count " + counter + "\n")["task"]["id"];
    for (const auto& id : {a, b, c}) {
      auto st = d.CliJson({"task", "show", id})["task"]["status"];
      if (st == "ready") d.CliJson({"dispatch", "--task", id, "--to", "w1"});
      if (st != "completed") WaitDone(d, id);
    }
    return std::vector<std::string>{a, b, c};
  };
  auto first = script();
  auto second = script();
  CHECK(first == second);
  int runs = 0;
  std::ifstream(counter) >> runs;
  CHECK(runs == 3);  // nothing ran twice
  auto again = d.CliJson({"task", "create", "--brief", "-", "--key", "dag-c"}, "ignored");
  CHECK(again["existing"] == true);
  CHECK(again["task"]["status"] == "completed");
  CHECK(!again["task"]["result_json"].get<std::string>().empty());
}

TEST_CASE("kill -9 of the daemon mid-run: survivors stopped, dispatch interrupted and re-run",
          "[dispatch][crash]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string marker = d.dir() + "/hung.pid";
  std::string done_id = CreateTask(d, "quick one\n");
  d.CliJson({"dispatch", "--task", done_id, "--to", "w1"});
  WaitDone(d, done_id);
  std::string id = CreateTask(d, "FAKE: hang-once " + marker + "\n");
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  pid_t hung = WaitForMarker(marker);
  d.Kill();
  CHECK(!ProcessGone(hung));  // the worker outlived the daemon
  d.Start();
  CHECK(WaitFor([&] { return ProcessGone(hung); }, 10s));
  auto p = Payload(WaitDone(d, id));
  CHECK(p["outcome"] == "succeeded");
  auto show = d.CliJson({"task", "show", id});
  REQUIRE(show["dispatches"].size() == 2);
  CHECK(show["dispatches"][0]["state"] == "interrupted");
  CHECK(show["dispatches"][0]["failure_class"] == "operational");
  CHECK(show["dispatches"][1]["state"] == "succeeded");
  // The task completed before the crash is intact and was not re-run.
  auto earlier = d.CliJson({"task", "show", done_id});
  CHECK(earlier["task"]["status"] == "completed");
  CHECK(earlier["dispatches"].size() == 1);
  CHECK(d.CliJson({"task", "list"})["tasks"].size() == 2);
}

TEST_CASE("decision gates block a task until resolved", "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string id = CreateTask(d, "needs a decision\n");
  auto g = d.CliJson({"gate", "create", "--task", id, "--question", "ship it?", "--options",
                      "yes,no"});
  CHECK(d.CliJson({"task", "show", id})["task"]["status"] == "blocked");
  auto msg = d.CliJson({"inbox", "--types", "decision_gate"});
  REQUIRE(msg["messages"].size() == 1);
  RunResult refused = d.Cli({"dispatch", "--task", id, "--to", "w1"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("gate") != std::string::npos);
  RunResult wrong = d.Cli({"gate", "resolve", g["id"].get<std::string>(), "--decision", "maybe"});
  CHECK(wrong.exit_code == 1);
  d.CliJson({"gate", "resolve", g["id"].get<std::string>(), "--decision", "yes"});
  CHECK(d.CliJson({"task", "show", id})["task"]["status"] == "ready");
  CHECK(d.CliJson({"gate", "list", "--open"})["gates"].empty());
}

TEST_CASE("cancelling a task kills its running dispatch", "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string marker = d.dir() + "/c.pid";
  std::string id = CreateTask(d, "FAKE: hang-once " + marker + "\n");
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  pid_t pid = WaitForMarker(marker);
  CHECK(d.CliJson({"task", "cancel", id})["status"] == "cancelled");
  CHECK(WaitFor([&] { return ProcessGone(pid); }, 10s));
  auto done = Payload(WaitDone(d, id));
  CHECK(done["failure_kind"] == "cancelled");
  CHECK(WaitFor([&] { return d.CliJson({"terminal", "show", "w1"})["state"] == "idle"; }, 5s));
}

TEST_CASE("hostile worker output: invalid UTF-8 is stored safely and every view still works",
          "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string script = d.WriteFile("bad.sh", "printf 'error: \\344\\270 x\\n' >&2\nexit 1\n");
  auto p = d.FakeProfile("sh", "shfam");
  p["command"] = {"/bin/sh", script};
  p["type"] = "command";
  d.WriteProfile("sh", p);
  d.Stop();
  d.Start();
  d.Cli({"terminal", "create", "--profile", "sh", "--handle", "s1", "--cwd", d.dir()});
  std::string id = CreateTask(d, "anything\n");
  d.CliJson({"dispatch", "--task", id, "--to", "s1"});
  auto done = WaitDone(d, id);
  CHECK(Payload(done)["failure_kind"] == "nonzero_exit");
  CHECK(d.Cli({"task", "show", id}).exit_code == 0);
  CHECK(d.Cli({"inbox"}).exit_code == 0);
  CHECK(d.Cli({"wait", "--task", id, "--timeout-ms", "100"}).exit_code == 0);
  // Invalid UTF-8 from a client is refused, not stored.
  RunResult bad = d.Cli({"send", "--to", "coordinator", "--type", "status", "--subject", "s", "--body", "\xff\xfe"});
  CHECK(bad.exit_code == 1);
  // An absurd wait is refused with a clear error and the daemon stays up.
  std::vector<std::string> args = {"wait", "--timeout-ms", "10"};
  for (int i = 0; i < 1001; ++i) {
    args.push_back("--task");
    args.push_back(std::to_string(i + 1));
  }
  RunResult huge = d.Cli(args);
  CHECK(huge.exit_code == 1);
  CHECK(huge.err.find("task_ids") != std::string::npos);
  // Task 0 is no task (the task index holds only tasks' messages): refused, not answered
  // with nothing. Beside a real task too.
  RunResult zero = d.Cli({"wait", "--task", id, "--task", "0", "--timeout-ms", "10"});
  CHECK(zero.exit_code == 1);
  CHECK(zero.err.find("task_ids: 0 is no task") != std::string::npos);
  CHECK(d.Cli({"status"}).exit_code == 0);
}

TEST_CASE("closing a terminal hands its work back instead of stranding it", "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string marker = d.dir() + "/h.pid";
  std::string running = CreateTask(d, "FAKE: hang-once " + marker + "\n");
  std::string queued = CreateTask(d, "next\n");
  d.CliJson({"dispatch", "--task", running, "--to", "w1"});
  CHECK(d.CliJson({"dispatch", "--task", queued, "--to", "w1"})["state"] == "queued");
  WaitForMarker(marker);
  CHECK(d.CliJson({"terminal", "close", "w1", "--force"})["state"] == "draining");
  auto stopped = Payload(WaitDone(d, running));
  CHECK(stopped["failure_kind"] == "cancelled");
  CHECK(WaitFor([&] { return d.CliJson({"task", "show", running})["task"]["status"] == "ready"; }, 10s));
  CHECK(WaitFor([&] { return d.CliJson({"task", "show", queued})["task"]["status"] == "ready"; }, 10s));
  CHECK(d.CliJson({"terminal", "show", "w1"})["state"] == "closed");
  // Both can go elsewhere.
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w2", "--cwd", d.dir()});
  d.CliJson({"dispatch", "--task", queued, "--to", "@idle"});
  CHECK(Payload(WaitDone(d, queued))["outcome"] == "succeeded");
}

TEST_CASE("a gate on a pending task: it becomes ready once deps complete and the gate resolves",
          "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string a = CreateTask(d, "dep\n");
  std::string b = CreateTask(d, "gated\n", {"--deps", a});
  auto g = d.CliJson({"gate", "create", "--task", b, "--question", "go?"});
  d.CliJson({"dispatch", "--task", a, "--to", "w1"});
  WaitDone(d, a);
  CHECK(d.CliJson({"task", "show", b})["task"]["status"] == "blocked");
  d.CliJson({"gate", "resolve", g["id"].get<std::string>(), "--decision", "yes"});
  CHECK(d.CliJson({"task", "show", b})["task"]["status"] == "ready");
}

TEST_CASE("@idle queues when every terminal is busy", "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string x = CreateTask(d, "FAKE: wait-file " + d.dir() + "/go\n");
  std::string y = CreateTask(d, "then me\n");
  CHECK(d.CliJson({"dispatch", "--task", x, "--to", "@idle"})["state"] == "running");
  CHECK(d.CliJson({"dispatch", "--task", y, "--to", "@idle"})["state"] == "queued");
  d.WriteFile("go", "");
  CHECK(Payload(WaitDone(d, y))["outcome"] == "succeeded");
}

TEST_CASE("heartbeats while a worker makes progress — an escalation when it goes silent",
          "[dispatch]") {
  DaemonFixture d;
  auto p = d.FakeProfile("fake", "fakefam");
  p["idle_timeout_s"] = 1;
  d.WriteProfile("fake", p);
  d.Start({"--config", d.WriteFile("config.json", R"({"heartbeat_interval_s": 0})")});
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string id = CreateTask(d, "FAKE: print one\nFAKE: print two\nFAKE: sleep 1800\nFAKE: print three\n");
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  auto p2 = Payload(WaitDone(d, id));
  CHECK(p2["outcome"] == "succeeded");  // silence alone escalates; it does not fail the run
  CHECK(d.CliJson({"inbox", "--task", id, "--types", "heartbeat"})["messages"].size() >= 2);
  auto esc = d.CliJson({"inbox", "--task", id, "--types", "escalation"});
  REQUIRE(esc["messages"].size() == 1);
  CHECK(esc["messages"][0]["subject"].get<std::string>().find("silent") != std::string::npos);
}

TEST_CASE("profile workdir policy: the terminal's directory or a private per-dispatch one",
          "[dispatch]") {
  DaemonFixture d;
  auto p = d.FakeProfile("priv", "fam");
  p["workdir"] = "dispatch";
  d.WriteProfile("priv", p);
  d.WriteProfile("fake", d.FakeProfile("fake", "fam"));
  d.Start();
  d.Cli({"terminal", "create", "--profile", "priv", "--handle", "p1", "--cwd", d.dir()});
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "f1", "--cwd", d.dir()});
  std::string a = CreateTask(d, "FAKE: print-cwd\n");
  std::string b = CreateTask(d, "FAKE: print-cwd\n");
  d.CliJson({"dispatch", "--task", a, "--to", "p1"});
  d.CliJson({"dispatch", "--task", b, "--to", "f1"});
  auto pa = Payload(WaitDone(d, a));
  auto pb = Payload(WaitDone(d, b));
  // The child's real working directory (getcwd), not the PWD variable the daemon sets.
  std::string da = pa["result"]["text"];
  CHECK(da.find("CWD=" + d.state_dir() + "/dispatches/") != std::string::npos);
  CHECK(da.find("/work\n") != std::string::npos);
  CHECK(pb["result"]["text"].get<std::string>().find("CWD=" + d.dir() + "\n") != std::string::npos);
}

TEST_CASE("doctor says what is ready and how to fix what is not, never printing secrets",
          "[dispatch]") {
  DaemonFixture d;
  auto ok = d.FakeProfile("ready", "fam");
  ok["version_command"] = "/bin/echo fake 1.0";
  d.WriteProfile("ready", ok);
  auto missing = d.FakeProfile("nokey", "fam");
  missing["command"] = {"no-such-cli-xyz"};
  missing["env"] = {{"API_KEY", "${env:NO_SUCH_KEY_XYZ}"},
                    {"BASE_URL", "${env:NO_SUCH_URL:-https://example.invalid/v1}"}};
  d.WriteProfile("nokey", missing);
  auto secret = d.FakeProfile("secret", "fam");
  secret["env"] = {{"API_KEY", "${env:HOME}"}};
  d.WriteProfile("secret", secret);
  d.Start();
  RunResult r = d.Cli({"doctor"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("READY     ready") != std::string::npos);
  CHECK(r.out.find("fake 1.0") != std::string::npos);
  CHECK(r.out.find("NOT READY nokey") != std::string::npos);
  CHECK(r.out.find("no-such-cli-xyz is not on conclaved's PATH") != std::string::npos);
  CHECK(r.out.find("NO_SUCH_KEY_XYZ is not set") != std::string::npos);
  CHECK(r.out.find("fix: export NO_SUCH_KEY_XYZ") != std::string::npos);
  CHECK(r.out.find("https://example.invalid/v1") != std::string::npos);
  CHECK(r.out.find("HOME is set (value hidden)") != std::string::npos);
  const char* home = std::getenv("HOME");
  if (home && std::string(home).size() > 4) CHECK(r.out.find(std::string("=") + home) == std::string::npos);
  auto j = d.CliJson({"profile", "list"});
  CHECK(j["profiles"].size() == 3);
}

TEST_CASE("SIGTERM during a run stops the worker, and the restarted daemon re-runs it",
          "[dispatch][crash]") {
  DaemonFixture d;
  StartWithFake(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string marker = d.dir() + "/t.pid";
  std::string id = CreateTask(d, "FAKE: hang-once " + marker + "\n");
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  pid_t worker = WaitForMarker(marker);
  CHECK(d.Stop() == 0);
  CHECK(ProcessGone(worker));  // a clean stop leaves no worker behind
  d.Start();
  auto p = Payload(WaitDone(d, id));
  CHECK(p["outcome"] == "succeeded");
  auto show = d.CliJson({"task", "show", id});
  REQUIRE(show["dispatches"].size() == 2);
  CHECK(show["dispatches"][0]["state"] == "interrupted");
}

TEST_CASE("a writer's claims are checked even for command profiles without a contract",
          "[dispatch]") {
  DaemonFixture d;
  auto p = d.FakeProfile("cmd", "fam");
  p["type"] = "command";
  p["contract"] = false;
  d.WriteProfile("cmd", p);
  d.Start();
  d.Cli({"terminal", "create", "--profile", "cmd", "--handle", "c1", "--cwd", d.dir()});
  std::string id = CreateTask(d, "FAKE: changes nothere.c\n", {"--role", "writer"});
  d.CliJson({"dispatch", "--task", id, "--to", "c1"});
  CHECK(Payload(WaitDone(d, id))["failure_kind"] == "claim_not_persisted");
}

// Issue 14: `terminal create --exclusive` — no two writer dispatches at once in its directory,
// through it or any terminal sharing it; readers still run; without it, as before.
TEST_CASE("an --exclusive terminal's directory takes one writer at a time", "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d, 4);
  std::string shared = d.dir() + "/shared", open_dir = d.dir() + "/open";
  std::filesystem::create_directories(shared);
  std::filesystem::create_directories(open_dir);
  auto term = d.CliJson({"terminal", "create", "--profile", "fake", "--handle", "a", "--cwd",
                         shared, "--exclusive"});
  CHECK(term["exclusive"] == true);
  d.CliJson({"terminal", "create", "--profile", "fake", "--handle", "b", "--cwd", shared});
  std::string go = d.dir() + "/go";
  std::string first = CreateTask(d, "FAKE: write started a\nFAKE: wait-file " + go + "\n",
                                 {"--role", "writer"});
  d.CliJson({"dispatch", "--task", first, "--to", "a"});
  REQUIRE(WaitFor([&] { return std::filesystem::exists(shared + "/started"); }, 20s));
  // A second writer through the other terminal waits in the queue; a reader runs.
  std::string second = CreateTask(d, "FAKE: write second.txt b\n", {"--role", "writer"});
  CHECK(d.CliJson({"dispatch", "--task", second, "--to", "b"})["state"] == "queued");
  std::string reader = CreateTask(d, "FAKE: print read only\n", {"--role", "tester"});
  d.CliJson({"dispatch", "--task", reader, "--to", "b"});
  CHECK(Payload(WaitDone(d, reader))["outcome"] == "succeeded");
  CHECK(!std::filesystem::exists(shared + "/second.txt"));
  CHECK(d.CliJson({"task", "show", second})["dispatches"][0]["state"] == "queued");
  std::ofstream(go) << "go";
  CHECK(Payload(WaitDone(d, first))["outcome"] == "succeeded");
  CHECK(Payload(WaitDone(d, second))["outcome"] == "succeeded");
  // Without --exclusive, two writers share a directory as before.
  d.CliJson({"terminal", "create", "--profile", "fake", "--handle", "c", "--cwd", open_dir});
  d.CliJson({"terminal", "create", "--profile", "fake", "--handle", "e", "--cwd", open_dir});
  std::string go2 = d.dir() + "/go2";
  std::string w1 = CreateTask(d, "FAKE: wait-file " + go2 + "\n", {"--role", "writer"});
  std::string w2 = CreateTask(d, "FAKE: wait-file " + go2 + "\n", {"--role", "writer"});
  CHECK(d.CliJson({"dispatch", "--task", w1, "--to", "c"})["state"] == "running");
  CHECK(d.CliJson({"dispatch", "--task", w2, "--to", "e"})["state"] == "running");
  std::ofstream(go2) << "go";
  WaitDone(d, w1);
  WaitDone(d, w2);
}

// The Transcript RPC and its follow read transcript.log on the loop. A worker without the
// sandbox can replace that file (the sandbox binds it read-only); a FIFO in its place reads as
// nothing, and the daemon goes on answering.
TEST_CASE("a transcript a worker replaced with a FIFO reads as nothing and stalls nothing",
          "[dispatch]") {
  DaemonFixture d;
  StartWithFake(d);
  d.CliJson({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  // A first run makes the dispatches directory. In the second, the worker's first output
  // makes the daemon create its dispatch directory, then the transcript (inotify, no polling);
  // the worker then renames a FIFO over it.
  std::string first = CreateTask(d, "FAKE: print first\n");
  d.CliJson({"dispatch", "--task", first, "--to", "w1"});
  REQUIRE(d.CliJson({"wait", "--task", first, "--types", "worker_done", "--from", "conclaved",
                     "--after", "0", "--timeout-ms", "60000"})["messages"].size() == 1);
  std::string dir = d.state_dir() + "/dispatches/$CONCLAVE_DISPATCH_ID";
  std::string log = dir + "/transcript.log";
  std::string id = CreateTask(d, "FAKE: print before\nFAKE: wait-file " + dir + "\nFAKE: wait-file " +
                                     log + "\nFAKE: sh mkfifo " + log + ".new && mv -f " + log +
                                     ".new " + log + "\nFAKE: print after\n");
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  auto done = d.CliJson({"wait", "--task", id, "--types", "worker_done", "--from", "conclaved",
                         "--after", "0", "--timeout-ms", "60000"});
  REQUIRE(done["messages"].size() == 1);
  std::string path = d.state_dir() + "/dispatches/" +
                     done["messages"][0]["dispatch_id"].get<std::string>() + "/transcript.log";
  INFO(done["messages"][0]["payload_json"].get<std::string>());
  struct stat st {};
  REQUIRE(lstat(path.c_str(), &st) == 0);
  REQUIRE(S_ISFIFO(st.st_mode));  // it was planted
  auto tr = d.CliJson({"terminal", "read", "w1"});
  CHECK(tr["data"].get<std::string>().empty());
  RunResult follow = d.Cli({"terminal", "read", "w1", "--follow"});
  CHECK(follow.exit_code == 0);
  CHECK(d.CliJson({"terminal", "show", "w1"})["state"] == "idle");
}
