// Integration: what recovery does after conclaved dies uncleanly (SIGKILL) — a worker whose
// pid was recorded nowhere is still found and stopped, a dispatch during which the daemon
// keeps dying fails as crash_loop instead of crash-looping it (clean shutdowns never count),
// and a writer re-queued after a crash or a timeout resumes its partial work in a real git
// repository instead of restarting.
// Real daemon, real fake-worker processes, the real database file (read and edited only while
// the daemon is dead).
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "daemon_fixture.h"
#include "git_repo.h"
#include "worker_waits.h"

using conclave::testing::DaemonFixture;
using conclave::testing::MakeRepo;
using conclave::testing::WaitFor;
using namespace conclave::testing::waits;
using json = nlohmann::json;

namespace {

void StartWithFake(DaemonFixture& d, const std::string& cwd = "") {
  auto p = d.FakeProfile("fake", "fakefam");
  p["env"] = {{"CONCLAVE_CLI", CONCLAVE_BIN}};
  d.WriteProfile("fake", p);
  json cfg = {{"retry", {{"base_ms", 50}, {"max_ms", 200}, {"max_attempts", 4}}}};
  d.Start({"--config", d.WriteFile("config.json", cfg.dump())});
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd",
         cwd.empty() ? d.dir() : cwd});
}

std::string Dispatched(DaemonFixture& d, const std::string& brief,
                       std::vector<std::string> dispatch_flags = {}) {
  std::string id = d.CliJson({"task", "create", "--brief", "-"}, brief)["task"]["id"];
  std::vector<std::string> args = {"dispatch", "--task", id, "--to", "w1"};
  args.insert(args.end(), dispatch_flags.begin(), dispatch_flags.end());
  d.CliJson(args);
  return id;
}

std::string Slurp(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A writer that leaves partial work (a commit, an uncommitted change, an untracked file) and
// hangs; resumed, it saves the brief it got and finishes.
std::string PartialWriter(const std::string& saved) {
  return "FAKE: if-fresh write partial.txt half done\n"
         "FAKE: if-fresh sh git add partial.txt && git commit -q -m half\n"
         "FAKE: if-fresh append README.md edited\n"
         "FAKE: if-fresh write notes.txt scratch\n"
         "FAKE: if-fresh hang\n"
         "FAKE: if-resumed save-brief " + saved + "\n"
         "FAKE: if-resumed changes partial.txt\n";
}

// The daemon's worker_done that ends the task's dispatching (no retry follows).
json WaitFinal(DaemonFixture& d, const std::string& task) {
  std::string after = "0";
  for (;;) {
    auto r = d.CliJson({"wait", "--task", task, "--types", "worker_done", "--from", "conclaved",
                        "--after", after, "--timeout-ms", "30000"});
    REQUIRE(!r["messages"].empty());
    for (const auto& m : r["messages"]) {
      if (m["from"] == "conclaved" && Payload(m)["will_retry"] != true) return Payload(m);
    }
    after = r["cursor"].get<std::string>();
  }
}

void CheckResumeBrief(const std::string& brief, const std::string& how) {
  INFO(brief);
  CHECK(brief.rfind("RESUME, DON'T RESTART", 0) == 0);  // it opens the brief
  CHECK(brief.find("ended early (" + how) != std::string::npos);
  CHECK(brief.find("partial.txt") != std::string::npos);   // committed since the start
  CHECK(brief.find("README.md") != std::string::npos);     // changed, not committed
  CHECK(brief.find("untracked: notes.txt") != std::string::npos);
  CHECK(brief.find("Verify and finalize") != std::string::npos);
  CHECK(brief.find("FAKE: if-fresh hang") != std::string::npos);  // the task itself follows
}

// Runs one statement on the (dead) daemon's database; returns the rows it changed.
int Exec(const DaemonFixture& d, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((d.state_dir() + "/conclave.db").c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  INFO((err ? err : ""));
  sqlite3_free(err);
  int changed = sqlite3_changes(db);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
  return changed;
}

// A child with exactly this environment (posix_spawn); the caller reaps it.
pid_t SpawnWithEnv(std::vector<std::string> argv, std::vector<std::string> env) {
  std::vector<char*> av, ev;
  for (auto& a : argv) av.push_back(a.data());
  av.push_back(nullptr);
  for (auto& e : env) ev.push_back(e.data());
  ev.push_back(nullptr);
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, av[0], nullptr, nullptr, av.data(), ev.data()) == 0);
  return pid;
}

int Count(const std::string& file) {
  int n = 0;
  std::ifstream(file) >> n;
  return n;
}

}  // namespace

TEST_CASE("a worker whose pid reached neither the store nor the spawn journal is stopped after "
          "a crash",
          "[recovery][crash]") {
  DaemonFixture d;
  StartWithFake(d);
  std::string marker = d.dir() + "/hung.pid";
  std::string id = Dispatched(d, "FAKE: hang-once " + marker + "\n");
  pid_t hung = WaitForMarker(marker);
  d.Kill();
  // The crash window between the spawn and the journal's write: no pid anywhere.
  CHECK(Exec(d, "UPDATE dispatches SET pid = 0, proc_start = 0 WHERE state = 'running'") == 1);
  std::filesystem::remove(d.state_dir() + "/spawned.journal");
  CHECK(!ProcessGone(hung));  // the worker outlived the daemon
  d.Start();
  CHECK(WaitFor([&] { return ProcessGone(hung); }, 10s));
  auto p = Payload(WaitDone(d, id));
  CHECK(p["outcome"] == "succeeded");
  auto show = d.CliJson({"task", "show", id});
  REQUIRE(show["dispatches"].size() == 2);
  CHECK(show["dispatches"][0]["state"] == "interrupted");
  CHECK(d.daemon_log().find("stopping leftover worker process " + std::to_string(hung)) !=
        std::string::npos);
}

// Found by the soak (tests/soak): recovery stopped only the process groups of dispatches still
// running, so a setsid escapee outlived every restart — and so did the leftovers of a dispatch
// whose end was committed but whose sweep the crash cut short.
TEST_CASE("a killed daemon's setsid escapee is stopped by the next daemon's recovery, even when "
          "its dispatch had already ended",
          "[recovery][crash]") {
  DaemonFixture d;
  StartWithFake(d);
  std::string escapee_file = d.dir() + "/escapee.pid", worker_file = d.dir() + "/worker.pid";
  std::string id = Dispatched(d, "FAKE: escapee " + escapee_file + "\nFAKE: hang-once " +
                                     worker_file + "\n");
  pid_t escapee = WaitForMarker(escapee_file);
  pid_t worker = WaitForMarker(worker_file);
  d.Kill();
  // The end was committed just before the crash: nothing is running as far as the store knows.
  CHECK(Exec(d, "UPDATE dispatches SET state = 'succeeded' WHERE state = 'running'") == 1);
  CHECK(Exec(d, "UPDATE tasks SET status = 'completed' WHERE id = " + id) == 1);
  REQUIRE(!ProcessGone(escapee));
  REQUIRE(!ProcessGone(worker));
  // Not this store's: the same socket, dispatch id and variables, another token (another
  // daemon's worker: the default socket path does not depend on the state directory).
  pid_t foreign = SpawnWithEnv({"/bin/sleep", "600"},
                               {"CONCLAVE_SOCKET=" + d.socket(), "CONCLAVE_DISPATCH_ID=1",
                                "CONCLAVE_DISPATCH_TOKEN=not-this-stores"});
  d.Start();  // recovery runs before the daemon answers
  CHECK(WaitFor([&] { return ProcessGone(escapee) && ProcessGone(worker); }, 10s));
  CHECK(!ProcessGone(foreign));  // stopped in the same pass as the others, had it been
  kill(foreign, SIGKILL);
  waitpid(foreign, nullptr, 0);
  CHECK(d.daemon_log().find("stopping leftover worker process " + std::to_string(escapee)) !=
        std::string::npos);
}

TEST_CASE("a dispatch during which the daemon dies 3 times soon after its start fails as "
          "crash_loop",
          "[recovery][crash]") {
  DaemonFixture d;
  StartWithFake(d);
  std::string runs = d.dir() + "/runs";
  std::string id = Dispatched(d, "FAKE: count " + runs + "\nFAKE: hang\n");
  for (int i = 1; i <= 3; ++i) {
    INFO("run " << i);
    REQUIRE(WaitFor([&] { return Count(runs) == i; }, 15s));
    d.Kill();
    d.Start();
  }
  auto done = WaitDone(d, id);
  auto p = Payload(done);
  CHECK(p["failure_kind"] == "crash_loop");
  CHECK(p["failure_class"] == "operational");
  CHECK(p["will_retry"] == false);
  auto show = d.CliJson({"task", "show", id});
  CHECK(show["task"]["status"] == "failed");
  REQUIRE(show["dispatches"].size() == 3);
  CHECK(show["dispatches"][0]["state"] == "interrupted");
  CHECK(show["dispatches"][1]["state"] == "interrupted");
  CHECK(show["dispatches"][2]["state"] == "failed");
  auto esc = d.CliJson({"inbox", "--types", "escalation"})["messages"];
  bool named = false;
  for (const auto& m : esc) {
    named |= m["subject"].get<std::string>().find("keeps dying") != std::string::npos;
  }
  CHECK(named);
  CHECK(d.CliJson({"terminal", "show", "w1"})["state"] == "idle");
  CHECK(Count(runs) == 3);  // not started a fourth time
}

TEST_CASE("a clean shutdown breaks the crash-loop count", "[recovery][crash]") {
  DaemonFixture d;
  StartWithFake(d);
  std::string runs = d.dir() + "/runs";
  std::string id = Dispatched(d, "FAKE: count " + runs + "\nFAKE: hang\n");
  REQUIRE(WaitFor([&] { return Count(runs) == 1; }, 15s));
  d.Kill();
  d.Start();
  REQUIRE(WaitFor([&] { return Count(runs) == 2; }, 15s));
  CHECK(d.Stop() == 0);  // clean: its run ends as "daemon shut down during the run"
  d.Start();
  REQUIRE(WaitFor([&] { return Count(runs) == 3; }, 15s));
  d.Kill();
  d.Start();
  REQUIRE(WaitFor([&] { return Count(runs) == 4; }, 15s));
  d.Kill();
  d.Start();
  // Two unclean deaths since the clean one: re-queued once more, not failed.
  CHECK(WaitFor([&] { return Count(runs) == 5; }, 15s));
  auto show = d.CliJson({"task", "show", id});
  CHECK(show["task"]["status"] == "dispatched");
  for (const auto& disp : show["dispatches"]) CHECK(disp["failure_kind"] != "crash_loop");
  d.CliJson({"task", "cancel", id});
}

TEST_CASE("a writer re-queued after a crash resumes: its brief opens with the partial work",
          "[recovery][resume]") {
  DaemonFixture d;
  std::string repo = MakeRepo(d);
  StartWithFake(d, repo);
  std::string saved = d.dir() + "/resumed-brief.txt";
  std::string id = Dispatched(d, PartialWriter(saved));
  REQUIRE(WaitFor([&] { return std::filesystem::exists(repo + "/notes.txt"); }, 15s));
  d.Kill();
  d.Start();
  auto p = Payload(WaitDone(d, id));
  INFO(p.dump());
  CHECK(p["outcome"] == "succeeded");
  CheckResumeBrief(Slurp(saved), "interrupted");
}

TEST_CASE("a writer retried after a hard timeout resumes too, a first attempt does not",
          "[recovery][resume]") {
  DaemonFixture d;
  std::string repo = MakeRepo(d);
  StartWithFake(d, repo);
  std::string saved = d.dir() + "/resumed-brief.txt";
  std::string id = Dispatched(d, PartialWriter(saved), {"--timeout-s", "3"});
  auto p = WaitFinal(d, id);
  INFO(p.dump());
  CHECK(p["outcome"] == "succeeded");
  auto show = d.CliJson({"task", "show", id});
  REQUIRE(show["dispatches"].size() == 2);
  CHECK(show["dispatches"][0]["failure_kind"] == "timeout");
  CheckResumeBrief(Slurp(saved), "timeout");
  // A fresh task's first attempt gets its brief as written.
  std::string fresh = d.dir() + "/fresh-brief.txt";
  std::string other = Dispatched(d, "FAKE: save-brief " + fresh + "\n");
  CHECK(Payload(WaitDone(d, other))["outcome"] == "succeeded");
  CHECK(Slurp(fresh).find("RESUME") == std::string::npos);
}
