// Integration: the daemon's threads and its workers' scheduling policy (common/runtime.h).
// The threads started before the loop runs (gRPC's) run SCHED_BATCH so they do not preempt the
// loop that wakes them; the loop, the API's completion-queue thread (which reads every request,
// and must not wait behind a worker for a core) and the workers run SCHED_OTHER, the workers
// child_nice (default 10) nicer. Every thread blocks SIGCHLD, which the loop reads from a
// signalfd (exec/child_registry), and no worker inherits a blocked signal.
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

TEST_CASE("the loop, the API's queue thread and the workers run SCHED_OTHER", "[dispatch]") {
  DaemonFixture d;
  std::string script =
      d.WriteFile("policy.sh", "awk '{print \"policy=\" $41 \" nice=\" $19}' /proc/$$/stat\n");
  auto p = d.FakeProfile("sh", "shfam");
  p["command"] = {"/bin/sh", script};
  p["type"] = "command";
  d.WriteProfile("sh", p);
  d.Start();

  const std::string tasks = "/proc/" + std::to_string(d.pid()) + "/task";
  int loop_policy = -1, queue_threads = 0, queue_other = 0, nexting = 0;
  int launchers = 0, launchers_other = 0;
  // Threads started before the loop runs and never later from the queue thread (gRPC's global
  // timer threads start each other; its executor and event-engine threads start on demand from
  // whichever thread needs one): gRPC's global timers and the log writer.
  int background = 0, background_batch = 0;
  for (const auto& t : std::filesystem::directory_iterator(tasks)) {
    auto [comm, policy] = CommAndPolicy(t.path().string() + "/stat");
    if (t.path().filename() == std::to_string(d.pid())) loop_policy = policy;
    if (comm == "grpc-queue") {
      ++queue_threads;
      if (policy == SCHED_OTHER) ++queue_other;
    }
    if (comm == "nexting_thread") ++nexting;
    if (comm == "launcher") {
      ++launchers;
      if (policy == SCHED_OTHER) ++launchers_other;
    }
    if (comm == "grpc_global_tim" || comm == "log-writer") {
      ++background;
      if (policy == SCHED_BATCH) ++background_batch;
    }
  }
  CHECK(loop_policy == SCHED_OTHER);
  // One completion-queue thread serves the API (api/async_calls.h), SCHED_OTHER, unlike the
  // threads gRPC starts before the loop runs (common/runtime.h). The callback API's polling
  // threads must not exist: a callback service (gRPC's default health service was one) brings
  // them back, and with them most of a call's cost.
  REQUIRE(queue_threads == 1);
  CHECK(queue_other == queue_threads);
  CHECK(background >= 2);
  CHECK(background_batch == background);
  CHECK(nexting == 0);
  // The launcher's spawning thread (exec/launcher): a spawn it makes is a worker's start.
  REQUIRE(launchers == 1);
  CHECK(launchers_other == 1);

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
  for (const char* own : {"launcher", "grpc-queue", "log-writer", "checkpointer", "snapshots",
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
