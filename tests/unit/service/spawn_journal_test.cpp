// The pid of a started worker: in the spawn journal at once (no commit), in the store with the
// run's outcome when it ends first — one commit before the spawn and one after the exit — or
// in a regular commit of its own once the run has gone on for a second. The journal is emptied
// once it is full and no live run's pid is only there. The journal's reader skips what it
// cannot trust. Fake clock, fake launcher.
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
  // One run on w1 from dispatch to completion.
  void RunQuick() {
    int64_t t = AddTask("quick");
    REQUIRE(Dispatch(t, "w1").ok());
    Settle();
    auto running = launcher.Running();
    REQUIRE(running.size() == 1);
    launcher.Finish(running[0], "done\n");
    REQUIRE(RunUntil([&] { return Task(t).status == domain::TaskState::kCompleted; }));
  }
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
  h.services->runs.SetJournalCompactAtForTest(1);  // full after one line
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

TEST_CASE("a run's end does not empty the journal while another run's pid is only there",
          "[service][dispatch][perf]") {
  ServiceHarness h;
  h.AddProfile("p", "fam", 2);
  h.AddTerminal("w1", "p");
  h.AddTerminal("w2", "p");  // the same directory: testers, which do not need it alone
  h.services->runs.SetJournalCompactAtForTest(1);
  auto tester = [](domain::Task& t) { t.role = "tester"; };
  int64_t slow = h.AddTask("slow", tester);
  int64_t quick = h.AddTask("quick", tester);
  const std::string journal_path = exec::SpawnJournalPath(h.config.state_dir);
  REQUIRE(h.Dispatch(slow, "w1").ok());
  REQUIRE(h.Dispatch(quick, "w2").ok());
  h.Settle();
  auto running = h.launcher.Running();
  REQUIRE(running.size() == 2);
  int64_t slow_id = h.Dispatches(slow).back().id;
  pid_t slow_pid = exec::ReadSpawnJournal(journal_path)[slow_id].pid;
  auto* quick_run = running[0]->run->pid() == slow_pid ? running[1] : running[0];
  REQUIRE(quick_run->run->pid() != slow_pid);
  h.launcher.Finish(quick_run, "done\n");
  REQUIRE(h.RunUntil([&] { return h.Task(quick).status == domain::TaskState::kCompleted; }));
  CHECK(h.Dispatches(slow).back().pid == 0);
  auto journal = exec::ReadSpawnJournal(journal_path);
  REQUIRE(journal.count(slow_id) == 1);  // recovery would still find the slow worker
  h.clock.Advance(1000);
  REQUIRE(h.RunUntil([&] { return h.Dispatches(slow).back().pid != 0; }));
  CHECK(std::filesystem::file_size(journal_path) == 0);  // now every line is redundant
}

TEST_CASE("short runs do not empty the journal each time: it is emptied once full",
          "[service][dispatch][perf]") {
  Journaled h;
  int64_t bytes = 0;
  for (int i = 0; i < 3; ++i) {
    h.RunQuick();
    int64_t now = static_cast<int64_t>(std::filesystem::file_size(h.JournalPath()));
    CHECK(now > bytes);  // the finished run's line is kept: no truncate per run
    bytes = now;
  }
  CHECK(exec::ReadSpawnJournal(h.JournalPath()).size() == 3);
  // Once the journal holds its limit, the next run's end (nothing else live) empties it.
  h.services->runs.SetJournalCompactAtForTest(bytes);
  h.RunQuick();
  CHECK(std::filesystem::file_size(h.JournalPath()) == 0);
}

TEST_CASE("the spawn journal's reader keeps whole lines only, the last entry per dispatch",
          "[exec][perf]") {
  std::string path = std::filesystem::temp_directory_path() / "cv-spawn-journal-test";
  std::filesystem::remove(path);
  {
    exec::SpawnJournal j(path);
    REQUIRE(j.Record(7, {4242, 99, ""}));
    REQUIRE(j.Record(8, {4343, 100, ""}));
    REQUIRE(j.Record(7, {4444, 101, ""}));
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
  // What an earlier daemon left counts toward the limit from this one's first write on: a
  // daemon restarted more often than it fills the journal must still empty it.
  const auto left = static_cast<int64_t>(std::filesystem::file_size(path));
  exec::SpawnJournal j(path, left + 16);
  j.Compact();  // nothing written by this instance: left alone
  CHECK(exec::ReadSpawnJournal(path).size() == 3);
  REQUIRE(j.Record(13, {5555, 1, ""}));  // 10 bytes more: not full
  CHECK_FALSE(j.full());
  j.Compact();
  CHECK(exec::ReadSpawnJournal(path).size() == 4);
  REQUIRE(j.Record(16, {5556, 1, ""}));  // 20 bytes more: full
  CHECK(j.full());
  j.Compact();
  CHECK(exec::ReadSpawnJournal(path).empty());
  CHECK(std::filesystem::file_size(path) == 0);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace conclave
