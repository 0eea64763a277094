// The pid of a started worker: in the spawn journal at once (no commit), in the store with the
// run's outcome when it ends first — one commit before the spawn and one after the exit — or
// in a regular commit of its own once the run has gone on for a second, after which the journal
// is emptied. The journal's reader skips what it cannot trust. Fake clock, fake launcher.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "exec/spawn_journal.h"
#include "service_harness.h"

namespace conclave {
namespace {
using testing::ServiceHarness;

struct Journaled : ServiceHarness {
  Journaled() {
    AddProfile("p", "fam");
    AddTerminal("w1", "p");
  }
  std::string JournalPath() const { return exec::SpawnJournalPath(config.state_dir); }
  int64_t Commits() { return core->batcher.commits(); }
};

TEST_CASE("a short run's pid is journaled at the spawn and stored with its outcome: two commits",
          "[service][dispatch][perf]") {
  Journaled h;
  int64_t t = h.AddTask("quick");
  int64_t before = h.Commits();
  REQUIRE(h.Dispatch(t, "w1").ok());
  h.Settle();
  auto running = h.launcher.Running();
  REQUIRE(running.size() == 1);
  CHECK(h.Commits() == before + 1);  // the dispatch and its move to running, together
  auto d = h.Dispatches(t).back();
  CHECK(d.pid == 0);  // not committed on its own...
  auto shown = h.services->tasks.Get(t);  // ...though `task show` has it from the live run
  REQUIRE(shown.ok());
  CHECK(shown->dispatches.back().pid == running[0]->run->pid());
  auto journal = exec::ReadSpawnJournal(h.JournalPath());
  REQUIRE(journal.count(d.id) == 1);  // ...but findable by recovery
  CHECK(journal[d.id].pid == running[0]->run->pid());
  CHECK(journal[d.id].start_time == running[0]->run->start_time());

  h.launcher.Finish(running[0], "done\n");
  REQUIRE(h.RunUntil([&] { return h.Task(t).status == domain::TaskState::kCompleted; }));
  CHECK(h.Commits() == before + 2);  // the outcome, with the pid
  d = h.Dispatches(t).back();
  CHECK(d.pid == running[0]->run->pid());
  CHECK(d.proc_start == running[0]->run->start_time());
}

TEST_CASE("a long run's pid reaches the store after a second and the journal empties",
          "[service][dispatch][perf]") {
  Journaled h;
  int64_t t = h.AddTask("slow");
  REQUIRE(h.Dispatch(t, "w1").ok());
  h.Settle();
  auto running = h.launcher.Running();
  REQUIRE(running.size() == 1);
  CHECK(std::filesystem::file_size(h.JournalPath()) > 0);
  h.clock.Advance(999);
  h.Settle();
  CHECK(h.Dispatches(t).back().pid == 0);
  h.clock.Advance(1);
  REQUIRE(h.RunUntil([&] { return h.Dispatches(t).back().pid != 0; }));
  CHECK(h.Dispatches(t).back().pid == running[0]->run->pid());
  CHECK(std::filesystem::file_size(h.JournalPath()) == 0);
  h.launcher.Finish(running[0], "done\n");
  REQUIRE(h.RunUntil([&] { return h.Task(t).status == domain::TaskState::kCompleted; }));
  CHECK(h.Dispatches(t).back().pid == running[0]->run->pid());
}

TEST_CASE("the spawn journal's reader keeps whole lines only, the last entry per dispatch",
          "[exec][perf]") {
  std::string path = std::filesystem::temp_directory_path() / "cv-spawn-journal-test";
  std::filesystem::remove(path);
  {
    exec::SpawnJournal j(path);
    REQUIRE(j.Record(7, {4242, 99}));
    REQUIRE(j.Record(8, {4343, 100}));
    REQUIRE(j.Record(7, {4444, 101}));
    REQUIRE(j.Record(14, {4545, 102, "0123456789abcdef0123456789abcdef01234567"}));
  }
  std::ofstream(path, std::ios::app)
      << "9 x 1\n10 1 5\n11 5000 7 extra\n15 5000 7 ABC\n-3 5000 7\n12 6000";
  auto entries = exec::ReadSpawnJournal(path);
  CHECK(entries.size() == 3);
  CHECK(entries[14].start_head == "0123456789abcdef0123456789abcdef01234567");  // a writer's
  CHECK(entries[7].start_head.empty());
  CHECK(entries.count(15) == 0);  // not a lower-case hex commit
  CHECK(entries[7].pid == 4444);
  CHECK(entries[7].start_time == 101);
  CHECK(entries[8].pid == 4343);
  CHECK(entries.count(9) == 0);   // not a number
  CHECK(entries.count(10) == 0);  // pid 1 is never ours
  CHECK(entries.count(11) == 0);  // trailing garbage
  CHECK(entries.count(12) == 0);  // torn last line
  exec::SpawnJournal j(path);
  j.Clear();  // nothing written by this instance: left alone
  CHECK(exec::ReadSpawnJournal(path).size() == 3);
  REQUIRE(j.Record(13, {5555, 1}));
  j.Clear();
  CHECK(exec::ReadSpawnJournal(path).empty());
  CHECK(std::filesystem::file_size(path) == 0);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace conclave
