// Integration: a worker's spawn stuck in the kernel before its program ran (a hung filesystem
// under its directory or program) is killed after spawn_timeout_ms, its dispatch fails as
// spawn_failed, and the spawn queued behind it on the launcher's thread runs. The hang is
// real: the test holds a write lease on the worker's program, so the spawn's execve, opening
// it, waits in the kernel for the lease to be given up (fs.lease-break-time, 45 s by default).
// Its own ctest entry reports SKIPPED (exit 77) where this filesystem grants no lease.
// A launch whose files cannot be written (a profile's file on a FIFO no one reads: an open that
// waits in the kernel, as on a hung filesystem) holds the launcher's thread before any child
// exists, where no signal reaches: it is given up after a whole spawn_timeout_ms, the thread
// replaced, and the queue runs on, while the daemon answers throughout (the files used to be
// written on the loop), and stops cleanly with that thread still held. That case needs no
// lease and runs everywhere.
// (A spawn is killed one to two spawn_timeout_ms after its launch; the waits allow 20 s.)
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "daemon_fixture.h"
#include "file_lease.h"
#include "worker_waits.h"

using conclave::testing::DaemonFixture;
using conclave::testing::FileLease;
using conclave::testing::LeasesHold;
using conclave::testing::RunResult;
using conclave::testing::WaitFor;
using namespace conclave::testing::waits;
using json = nlohmann::json;

namespace {

// Before any daemon is started (exit does not unwind): SKIPPED where this filesystem grants no
// lease, or where the kernel gives a lease up on its own before the daemon's watch fires.
void SkipUnlessLeasesHold() {
  if (std::string why = LeasesHold(15); !why.empty()) {
    std::cerr << "SKIPPED: " << why << "\n";
    std::exit(77);
  }
}

json CommandProfile(const DaemonFixture& d, const std::string& name, const std::string& program) {
  auto p = d.FakeProfile(name, "fam");
  p["type"] = "command";
  p["contract"] = false;
  p["command"] = {program};
  return p;
}

std::string Dispatch(DaemonFixture& d, const std::string& to) {
  auto task =
      d.CliJson({"task", "create", "--brief", "-"}, "run\n")["task"]["id"].get<std::string>();
  CHECK(d.CliJson({"dispatch", "--task", task, "--to", to})["state"] == "running");
  return task;
}

}  // namespace

TEST_CASE("a spawn stuck in the kernel is killed after spawn_timeout_ms and the next one runs",
          "[.][stuck-spawn]") {
  SkipUnlessLeasesHold();
  DaemonFixture d;
  std::string program = d.WriteFile("stuck-cli", "#!/bin/sh\nexit 0\n");
  REQUIRE(chmod(program.c_str(), 0755) == 0);
  d.WriteProfile("stuck", CommandProfile(d, "stuck", program));
  d.WriteProfile("ok", CommandProfile(d, "ok", "/bin/true"));
  d.Start({"--config", d.WriteFile("config.json", R"({"spawn_timeout_ms": 1500})")});
  d.CliJson({"terminal", "create", "--profile", "stuck", "--handle", "s1", "--cwd", d.dir()});
  d.CliJson({"terminal", "create", "--profile", "ok", "--handle", "o1", "--cwd", d.dir()});
  FileLease lease(program);
  REQUIRE(lease.held());

  std::string stuck = Dispatch(d, "s1");
  // Queued behind the stuck spawn on the launcher's thread; the daemon answers meanwhile.
  std::string next = Dispatch(d, "o1");
  auto p = Payload(WaitDone(d, stuck, 20000));
  INFO(p.dump());
  CHECK(p["failure_kind"] == "spawn_failed");
  std::string evidence = p["evidence"].get<std::string>();
  CHECK(evidence.find("stuck in the kernel") != std::string::npos);
  CHECK(Payload(WaitDone(d, next, 20000))["outcome"] == "succeeded");
  // The killed child was reaped by its run: nothing of it is left.
  auto at = evidence.find("(process ");
  REQUIRE(at != std::string::npos);
  pid_t child = std::stoi(evidence.substr(at + 9));
  CHECK(ProcessGone(child));
  CHECK(d.CliJson({"task", "show", stuck})["dispatches"][0]["state"] == "failed");
}

TEST_CASE("a launch stuck before its worker exists is given up and the queue behind it runs",
          "[launch]") {
  DaemonFixture d;
  const std::string fifo = d.dir() + "/hung.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  auto hung = CommandProfile(d, "hung", "/bin/true");
  hung["files"] = {{fifo, "x"}};
  d.WriteProfile("hung", hung);
  d.WriteProfile("ok", CommandProfile(d, "ok", "/bin/true"));
  // Not retried here, so the one dispatch is the one given up.
  d.Start({"--config", d.WriteFile("config.json",
                                   R"({"spawn_timeout_ms": 1500, "retry": {"max_attempts": 1}})")});
  d.CliJson({"terminal", "create", "--profile", "hung", "--handle", "h1", "--cwd", d.dir()});
  d.CliJson({"terminal", "create", "--profile", "ok", "--handle", "o1", "--cwd", d.dir()});

  std::string stuck = Dispatch(d, "h1");
  // Queued behind it on the launcher's thread; this call and the waits go through the loop.
  std::string next = Dispatch(d, "o1");
  auto p = Payload(WaitDone(d, stuck, 20000));
  INFO(p.dump());
  CHECK(p["failure_kind"] == "spawn_failed");
  CHECK(p["evidence"].get<std::string>().find("stuck before its process existed") !=
        std::string::npos);
  // While the old thread is still held by the FIFO.
  CHECK(Payload(WaitDone(d, next, 20000))["outcome"] == "succeeded");
  CHECK(d.CliJson({"task", "show", stuck})["dispatches"][0]["state"] == "failed");
  CHECK(d.CliJson({"task", "show", stuck})["dispatches"].size() == 1);
  // status counts the thread and doctor says it is stuck, without failing the profiles' check.
  auto counts = d.CliJson({"status"})["counts"];
  CHECK(counts["launch_threads_replaced"] == "1");
  CHECK(counts["launch_threads_stuck"] == "1");
  RunResult doctor = d.Cli({"doctor"});
  INFO(doctor.out);
  CHECK(doctor.exit_code == 0);
  CHECK(doctor.out.find("DAEMON    warn 1 of 1 spawn thread(s) replaced as stuck") !=
        std::string::npos);
  SECTION("the daemon stops cleanly while the old thread is still held") {
    // It joins only the thread that replaced it.
    CHECK(d.Stop() == 0);
  }
  SECTION("once the file is read the old thread ends, spawning nothing, and doctor is quiet") {
    int reader = open(fifo.c_str(), O_RDONLY | O_CLOEXEC);  // lets the writer's open return
    REQUIRE(reader >= 0);
    REQUIRE(WaitFor(
        [&] { return d.CliJson({"status"})["counts"]["launch_threads_stuck"] == "0"; }, 20s));
    close(reader);
    CHECK(d.CliJson({"status"})["counts"]["launch_threads_replaced"] == "1");
    CHECK(d.CliJson({"doctor"}).value("daemon_warnings", json::array()).empty());
    // The given-up launch was not retried.
    CHECK(d.CliJson({"task", "show", stuck})["dispatches"].size() == 1);
    CHECK(d.Stop() == 0);
  }
}
