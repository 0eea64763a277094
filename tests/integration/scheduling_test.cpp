// Integration: the daemon's threads and its workers' scheduling policy (common/runtime.h).
// The threads started before the loop runs (gRPC's) run SCHED_BATCH so they do not preempt the
// loop that wakes them; the loop (which polls the API's completion queue and reads every
// request: it must not wait behind a worker for a core), its watcher (api/queue_loop.h: it wakes
// the loop for a timer or a worker's output), the queue's own thread where the config gives it
// one, and the workers run SCHED_OTHER, the workers child_nice (default 10) nicer. Every thread
// blocks SIGCHLD, which the loop reads from a signalfd (exec/child_registry), and no worker
// inherits a blocked signal.
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "daemon_fixture.h"
#include "worker_waits.h"

using conclave::testing::DaemonFixture;
using conclave::testing::RunResult;
using namespace conclave::testing::waits;

namespace {

// A thread's comm and policy (field 41 of its stat: 0 SCHED_OTHER, 3 SCHED_BATCH).
std::pair<std::string, int> CommAndPolicy(const std::string& stat_path) {
  std::ifstream in(stat_path);
  std::string line;
  std::getline(in, line);
  auto open = line.find('('), close = line.rfind(')');
  REQUIRE(open != std::string::npos);
  REQUIRE(close != std::string::npos);
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 41 && rest >> field; ++i) {
  }
  return {line.substr(open + 1, close - open - 1), std::stoi(field)};
}

// A process's nice (field 19 of its stat).
int NiceOf(const std::string& stat_path) {
  std::ifstream in(stat_path);
  std::string line;
  std::getline(in, line);
  auto close = line.rfind(')');
  REQUIRE(close != std::string::npos);
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 19 && rest >> field; ++i) {
  }
  return std::stoi(field);
}

// The daemon's own threads: how many of each name run SCHED_OTHER, and how many there are.
struct OwnThreads {
  int loop_policy = -1, queue = 0, queue_other = 0, watch = 0, watch_other = 0, nexting = 0;
  int launchers = 0, launchers_other = 0;
  // Threads started before the loop runs and never later from the loop (gRPC's global timer
  // threads start each other; its executor and event-engine threads start on demand from
  // whichever thread needs one): gRPC's global timers and the log writer.
  int background = 0, background_batch = 0;
};

OwnThreads ReadOwnThreads(pid_t pid) {
  OwnThreads o;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& t : std::filesystem::directory_iterator(tasks)) {
    auto [comm, policy] = CommAndPolicy(t.path().string() + "/stat");
    const bool other = policy == SCHED_OTHER;
    if (t.path().filename() == std::to_string(pid)) o.loop_policy = policy;
    if (comm == "grpc-queue") ++o.queue, o.queue_other += other;
    if (comm == "loop-watch") ++o.watch, o.watch_other += other;
    if (comm == "nexting_thread") ++o.nexting;
    if (comm == "launcher") ++o.launchers, o.launchers_other += other;
    if (comm == "grpc_global_tim" || comm == "log-writer") {
      ++o.background;
      if (policy == SCHED_BATCH) ++o.background_batch;
    }
  }
  return o;
}

// A dispatch that reports its worker's policy and nice, and the nice a worker should have.
void CheckWorkerPolicy(DaemonFixture& d) {
  d.Cli({"terminal", "create", "--profile", "sh", "--handle", "s1", "--cwd", d.dir()});
  std::string id = d.CliJson({"task", "create", "--brief", "-"}, "which policy\n")["task"]["id"];
  d.CliJson({"dispatch", "--task", id, "--to", "s1"});
  auto done = Payload(WaitDone(d, id));
  CHECK(done["outcome"] == "succeeded");
  // child_nice's default: a worker runs 10 nicer than the daemon, at most 19.
  const int want = std::min(NiceOf("/proc/" + std::to_string(d.pid()) + "/stat") + 10, 19);
  CHECK(done["result"]["text"].get<std::string>().find(
            "policy=0 nice=" + std::to_string(want)) != std::string::npos);
}

void WritePolicyProfile(DaemonFixture& d) {
  std::string script =
      d.WriteFile("policy.sh", "awk '{print \"policy=\" $41 \" nice=\" $19}' /proc/$$/stat\n");
  auto p = d.FakeProfile("sh", "shfam");
  p["command"] = {"/bin/sh", script};
  p["type"] = "command";
  d.WriteProfile("sh", p);
}

TEST_CASE("the loop, its watcher and the workers run SCHED_OTHER", "[dispatch]") {
  DaemonFixture d;
  WritePolicyProfile(d);
  d.Start();
  const OwnThreads o = ReadOwnThreads(d.pid());
  CHECK(o.loop_policy == SCHED_OTHER);
  // The loop polls the API's completion queue itself (api/queue_loop.h): no queue thread; its
  // watcher runs SCHED_OTHER, unlike the threads gRPC starts before the loop runs
  // (common/runtime.h). The callback API's polling threads must not exist: a callback service
  // (gRPC's default health service was one) brings them back, and with them most of a call's
  // cost.
  CHECK(o.queue == 0);
  REQUIRE(o.watch == 1);
  CHECK(o.watch_other == 1);
  CHECK(o.background >= 2);
  CHECK(o.background_batch == o.background);
  CHECK(o.nexting == 0);
  // The launcher's spawning thread (exec/launcher): a spawn it makes is a worker's start.
  REQUIRE(o.launchers == 1);
  CHECK(o.launchers_other == 1);
  CheckWorkerPolicy(d);
  CHECK(d.daemon_log().find("API's queue on the loop") != std::string::npos);
}

TEST_CASE("with api_queue_thread the API's queue has its own thread SCHED_OTHER", "[dispatch]") {
  // The layout before the loop polled the queue, kept as the config's choice, and what the
  // daemon falls back to when it cannot watch Asio's reactor.
  DaemonFixture d;
  WritePolicyProfile(d);
  d.Start({"--config", d.WriteFile("config.json", R"({"api_queue_thread": true})")});
  const OwnThreads o = ReadOwnThreads(d.pid());
  CHECK(o.loop_policy == SCHED_OTHER);
  REQUIRE(o.queue == 1);
  CHECK(o.queue_other == 1);
  CHECK(o.watch == 0);
  CHECK(o.background_batch == o.background);
  CHECK(o.nexting == 0);
  CheckWorkerPolicy(d);
  CHECK(d.daemon_log().find("API's queue on its own thread") != std::string::npos);
  CHECK(d.Stop() == 0);
}

TEST_CASE("the helper threads run child_nice nicer than the daemon and what they run no nicer",
          "[dispatch]") {
  // service/core.cpp: the helper pool's CPU work (a finished run's output, git) gives way to the
  // loop as the workers' does. A command a helper runs (doctor's version probe here; git, a
  // verify command) runs child_nice nicer than the daemon, as a worker does: not twice that.
  DaemonFixture d;
  std::string script = d.WriteFile("nice.sh", "awk '{print \"nice=\" $19}' /proc/$$/stat\n");
  auto p = d.FakeProfile("probe", "probefam");
  p["version_command"] = "/bin/sh " + script;
  d.WriteProfile("probe", p);
  d.Start();
  const std::string proc = "/proc/" + std::to_string(d.pid());
  const int want = std::min(NiceOf(proc + "/stat") + 10, 19);
  int helpers = 0, helpers_nicer = 0;
  for (const auto& t : std::filesystem::directory_iterator(proc + "/task")) {
    if (CommAndPolicy(t.path().string() + "/stat").first != "helper") continue;
    ++helpers;
    if (NiceOf(t.path().string() + "/stat") == want) ++helpers_nicer;
  }
  CHECK(helpers == 2);  // service/core.h: kHelperThreads
  CHECK(helpers_nicer == helpers);
  RunResult r = d.Cli({"doctor"});
  INFO(r.out << r.err);
  CHECK(r.out.find("nice=" + std::to_string(want) + "\n") != std::string::npos);
}

TEST_CASE("every thread conclaved starts itself has a name of its own", "[dispatch]") {
  // top -H, ps -L and the bench's split of a dispatch's CPU tell the threads apart by name; only
  // the loop, the main thread, keeps the process's.
  DaemonFixture d;
  d.Start();
  const std::string tasks = "/proc/" + std::to_string(d.pid()) + "/task";
  std::map<std::string, int> names;
  int unnamed = 0;
  for (const auto& t : std::filesystem::directory_iterator(tasks)) {
    const std::string comm = CommAndPolicy(t.path().string() + "/stat").first;
    if (t.path().filename() != std::to_string(d.pid()) && comm == "conclaved") ++unnamed;
    ++names[comm];
  }
  std::string seen;
  for (const auto& [name, n] : names) seen += name + "×" + std::to_string(n) + " ";
  INFO(seen);
  CHECK(unnamed == 0);
  CHECK(names["conclaved"] == 1);
  for (const char* own : {"launcher", "loop-watch", "log-writer", "checkpointer", "snapshots",
                          "notifier", "tree-sweeper", "accept", "worker-accept"}) {
    CHECK(names[own] == 1);
  }
  CHECK(names["helper"] == 2);  // service/core.h: kHelperThreads
}

// The blocked-signal mask (SigBlk, hex) of a thread's status file; nullopt once it has ended.
std::optional<uint64_t> BlockedSignals(const std::string& status_path) {
  std::ifstream in(status_path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("SigBlk:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16);
  }
  return std::nullopt;
}

TEST_CASE("no thread of conclaved takes SIGCHLD and no worker starts with it blocked",
          "[dispatch]") {
  // exec/child_registry: the kernel gives a child's SIGCHLD to the thread that spawned it unless
  // that thread blocks it; the launcher's thread, asleep by then, was woken for every worker.
  // Every thread blocks it, the loop too, which reads it from a signalfd.
  DaemonFixture d;
  auto p = d.FakeProfile("mask", "maskfam");
  p["command"] = {"/bin/grep", "SigBlk", "/proc/self/status"};  // no shell: it sets its own
  p["type"] = "command";
  d.WriteProfile("mask", p);
  d.Start();
  d.Cli({"terminal", "create", "--profile", "mask", "--handle", "m1", "--cwd", d.dir()});
  std::string id = d.CliJson({"task", "create", "--brief", "-"}, "which mask\n")["task"]["id"];
  d.CliJson({"dispatch", "--task", id, "--to", "m1"});
  auto done = Payload(WaitDone(d, id));
  CHECK(done["outcome"] == "succeeded");
  const std::string text = done["result"]["text"];
  INFO(text);
  CHECK(text.find("SigBlk:\t0000000000000000") != std::string::npos);

  const uint64_t sigchld = uint64_t{1} << (SIGCHLD - 1);
  const std::string tasks = "/proc/" + std::to_string(d.pid()) + "/task";
  std::string taking;
  int threads = 0;
  for (const auto& t : std::filesystem::directory_iterator(tasks)) {
    const auto blocked = BlockedSignals(t.path().string() + "/status");
    if (!blocked) continue;  // ended meanwhile
    ++threads;
    if (!(*blocked & sigchld)) taking += CommAndPolicy(t.path().string() + "/stat").first + " ";
  }
  INFO("threads taking SIGCHLD: " << taking);
  CHECK(threads > 10);  // the loop, gRPC's, the launcher's and the daemon's other threads
  CHECK(taking.empty());
}

TEST_CASE("child_nice 0 leaves workers at the daemon's own priority", "[dispatch]") {
  DaemonFixture d;
  std::string script = d.WriteFile("nice.sh", "awk '{print \"nice=\" $19}' /proc/$$/stat\n");
  auto p = d.FakeProfile("sh", "shfam");
  p["command"] = {"/bin/sh", script};
  p["type"] = "command";
  d.WriteProfile("sh", p);
  d.Start({"--config", d.WriteFile("config.json", R"({"child_nice": 0})")});
  d.Cli({"terminal", "create", "--profile", "sh", "--handle", "s1", "--cwd", d.dir()});
  std::string id = d.CliJson({"task", "create", "--brief", "-"}, "which nice\n")["task"]["id"];
  d.CliJson({"dispatch", "--task", id, "--to", "s1"});
  auto done = Payload(WaitDone(d, id));
  CHECK(done["outcome"] == "succeeded");
  const int daemons = NiceOf("/proc/" + std::to_string(d.pid()) + "/stat");
  CHECK(done["result"]["text"].get<std::string>().find("nice=" + std::to_string(daemons)) !=
        std::string::npos);
}

}  // namespace
