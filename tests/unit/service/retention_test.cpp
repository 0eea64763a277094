// Service-level tests of the retention pass over the real store, with a fake clock: old
// heartbeats and read messages leave the log, old dispatch directories leave the disk, what
// is unread or still running stays, and the pass repeats by itself.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "service_harness.h"

namespace conclave {
namespace {
using testing::ServiceHarness;
namespace fs = std::filesystem;
constexpr int64_t kDay = 86'400'000;

struct Retained : ServiceHarness {
  Retained()
      : ServiceHarness([](config::Config& c) {
          c.retention.heartbeat_days = 7;
          c.retention.read_message_days = 30;
          c.retention.dispatch_days = 30;
          c.retention.interval_s = 3600;
        }) {
    AddProfile("p", "f", 2);
    AddTerminal("w1", "p");
    AddTerminal("w2", "p");
  }
  void Note(const std::string& type, const std::string& subject) {
    REQUIRE(core->batcher.Write([&] {
      core->Notify({"coordinator", type, "normal", 0, 0, subject, "", ""});
      return Status::Ok();
    }).ok());
  }
  // One explicit pass at the current time, run to its end.
  void Pass() {
    bool done = false;
    services->retention.RunPass([&] { done = true; });
    REQUIRE(RunUntil([&] { return done; }));
  }
  size_t Count(const std::string& type) { return Messages(type).size(); }
  // n heartbeats noted now, oldest first.
  auto Beats(size_t n) {
    for (size_t i = 0; i < n; ++i) Note("heartbeat", "beat " + std::to_string(i));
    auto beats = Messages("heartbeat");
    REQUIRE(beats.size() == n);
    return beats;
  }
  bool Has(const std::string& type, const std::string& subject) {
    for (const auto& m : Messages(type)) {
      if (m.subject == subject) return true;
    }
    return false;
  }
};

TEST_CASE("retention deletes old heartbeats, read messages and dispatch directories only",
          "[service][retention]") {
  Retained h;
  int64_t t = h.AddTask("old work");
  REQUIRE(h.Dispatch(t, "w1").ok());
  h.launcher.Finish(h.launcher.Running().front(), "done\n", 0);
  REQUIRE(h.RunUntil([&] { return h.Dispatches(t)[0].finished_ms > 0; }));
  const std::string old_dir = h.core->DispatchDir(h.Dispatches(t)[0].id);
  REQUIRE(fs::exists(old_dir));
  h.Note("heartbeat", "beat");
  h.Note("status", "was read");
  h.Note("escalation", "never read");
  auto read = h.core->messages.TakeUnread("coordinator", {"status"}, 1000, false);
  REQUIRE(read.size() >= 1);
  const size_t heartbeats = h.Count("heartbeat");
  REQUIRE(heartbeats >= 1);

  h.clock.Advance(8 * kDay);
  h.Pass();
  CHECK(h.Count("heartbeat") == 0);          // older than 7 days
  CHECK(h.Has("status", "was read"));        // read, but younger than 30 days
  CHECK(fs::exists(old_dir));                // finished 8 days ago
  CHECK(h.services->retention.disk().removed_messages == static_cast<int64_t>(heartbeats));

  // A dispatch that starts now and is still running at day 31.
  int64_t running = h.AddTask("long run");
  REQUIRE(h.Dispatch(running, "w2").ok());
  const std::string running_dir = h.core->DispatchDir(h.Dispatches(running)[0].id);
  // What a real run has once it printed (the fake launcher writes only when it finishes).
  fs::create_directories(running_dir);
  std::ofstream(running_dir + "/transcript.log") << "still working\n";
  h.clock.Advance(23 * kDay);
  h.Pass();
  CHECK_FALSE(h.Has("status", "was read"));        // read, 31 days old
  CHECK(h.Has("escalation", "never read"));        // unread: kept whatever its age
  CHECK_FALSE(fs::exists(old_dir));
  CHECK(fs::exists(running_dir));
  CHECK(h.services->retention.disk().removed_dispatch_dirs == 1);
  const auto& disk = h.services->retention.disk();
  CHECK(disk.measured_ms == h.clock.NowMs());
  CHECK(disk.database_bytes > 0);
  CHECK(disk.state_bytes >= disk.database_bytes + disk.dispatch_bytes);
  CHECK(disk.free_bytes > 0);
}

TEST_CASE("the retention pass repeats by itself every interval", "[service][retention]") {
  Retained h;
  REQUIRE(h.RunUntil([&] { return h.services->retention.disk().measured_ms > 0; }));
  const int64_t first = h.services->retention.disk().measured_ms;
  h.Note("heartbeat", "beat");
  // Eight days on, the hourly alarm has come: the next pass (at that alarm's time) measures
  // again; by the one after, the beat is older than 7 days and goes.
  h.clock.Advance(8 * kDay);
  REQUIRE(h.RunUntil([&] { return h.services->retention.disk().measured_ms > first; }));
  h.clock.Advance(3600 * 1000);
  REQUIRE(h.RunUntil([&] { return h.Count("heartbeat") == 0; }));
}

TEST_CASE("retention deletes a backlog in small writes, each from where the last stopped",
          "[service][retention]") {
  Retained h;
  // 1,200 old read messages with an unread one after every third: more than one write's worth,
  // with kept messages between the deleted ones.
  for (int i = 0; i < 1200; ++i) {
    h.Note("status", "read " + std::to_string(i));
    if (i % 3 == 0) h.Note("escalation", "kept " + std::to_string(i));
  }
  while (!h.core->messages.TakeUnread("coordinator", {"status"}, 1000, false).empty()) {
  }
  const int64_t commits = h.core->batcher.commits();
  h.clock.Advance(31 * kDay);
  h.Pass();
  CHECK(h.Count("status") == 0);
  CHECK(h.Count("escalation") == 400);
  CHECK(h.services->retention.disk().removed_messages == 1200);
  // The first write takes kFirstDeleteBatch (256): 1,200 need several.
  CHECK(h.core->batcher.commits() - commits >= 2);
}

TEST_CASE("a retention delete starts after the seq it is given and reports the last it took",
          "[service][retention]") {
  Retained h;
  auto beats = h.Beats(10);
  const int64_t fifth = beats[4].seq, last = beats[9].seq;
  store::RetentionStore store(h.core->db);
  store::RetentionStore::Deleted d;
  REQUIRE(h.core->batcher.Write([&] {
    d = store.DeleteMessages(last, 0, fifth, 3);
    return Status::Ok();
  }).ok());
  h.core->batcher.Flush();
  CHECK(d.count == 3);
  CHECK(d.last_seq == beats[7].seq);
  auto left = h.Messages("heartbeat");
  REQUIRE(left.size() == 7);
  CHECK(left[4].seq == fifth);     // at or below the start: untouched
  CHECK(left[5].seq == beats[8].seq);
}

TEST_CASE("a retention delete that runs out of time stops after one row and says it was cut",
          "[service][retention]") {
  Retained h;
  auto beats = h.Beats(12);
  const int64_t last = beats[11].seq;
  store::RetentionStore store(h.core->db);
  // out_of_time says yes from its n-th question on (0: never).
  auto remove = [&](int64_t after, int limit, int yes_from) {
    int asked = 0;
    store::RetentionStore::Deleted d;
    REQUIRE(h.core->batcher.Write([&] {
      d = store.DeleteMessages(last, 0, after, limit, [&] {
        return yes_from > 0 && ++asked >= yes_from;
      });
      return Status::Ok();
    }).ok());
    h.core->batcher.Flush();
    return d;
  };
  // Out of time while it reads the batch, at its third seq: only the first row goes (deleting
  // without asking while reading would take three).
  auto d = remove(0, 5, 3);
  CHECK(d.count == 1);
  CHECK(d.cut);
  CHECK(d.last_seq == beats[0].seq);
  CHECK(h.Count("heartbeat") == 11);
  // Out of time once the batch is read (5 questions), before its second row: one row.
  d = remove(d.last_seq, 5, 6);
  CHECK(d.count == 1);
  CHECK(d.cut);
  CHECK(d.last_seq == beats[1].seq);
  CHECK(h.Count("heartbeat") == 10);
  // Never: the whole batch, not cut.
  d = remove(d.last_seq, 5, 0);
  CHECK(d.count == 5);
  CHECK_FALSE(d.cut);
  CHECK(d.last_seq == beats[6].seq);
  // Fewer left than the batch: all of them, not cut (the pass's end).
  d = remove(d.last_seq, 10, 0);
  CHECK(d.count == 5);
  CHECK_FALSE(d.cut);
  CHECK(h.Count("heartbeat") == 0);
}

TEST_CASE("a pass whose every delete runs out of time goes on one message at a time to the end",
          "[service][retention]") {
  // A budget of nothing: each delete is cut after its first row, with its batch unfinished. The
  // pass must take a cut delete for more to come, not for the end of the backlog, and each
  // delete must stop at its budget (one commit a message).
  Retained h;
  h.Beats(100);
  h.services->retention.SetDeleteBudget(std::chrono::microseconds(0));
  int64_t heard = 0;
  int asked = 0;
  h.services->retention.HearRequests([&] {
    ++asked;
    return ++heard;  // a request came between every two deletes
  });
  const int64_t commits = h.core->batcher.commits();
  h.clock.Advance(8 * kDay);
  h.Pass();
  CHECK(h.Count("heartbeat") == 0);
  CHECK(h.services->retention.disk().removed_messages == 100);
  CHECK(h.core->batcher.commits() - commits >= 100);
  CHECK(asked >= 99);  // after every delete but the last
}

TEST_CASE("a retention write grows while it is quick and shrinks when it holds the loop") {
  using std::chrono::microseconds;
  CHECK(service::NextDeleteBatch(256, microseconds(100)) == 512);
  CHECK(service::NextDeleteBatch(256, microseconds(400)) == 256);
  CHECK(service::NextDeleteBatch(256, microseconds(700)) == 128);
  CHECK(service::NextDeleteBatch(service::kMaxDeleteBatch, microseconds(10)) ==
        service::kMaxDeleteBatch);
  CHECK(service::NextDeleteBatch(service::kMinDeleteBatch, microseconds(500000)) ==
        service::kMinDeleteBatch);
}

TEST_CASE("retention waits twice a delete between two while requests come and briefly if none") {
  using std::chrono::microseconds;
  CHECK(service::PauseAfterDelete(microseconds(400), true) == microseconds(800));
  CHECK(service::PauseAfterDelete(microseconds(20), true) == service::kQuietPause);
  // Never no wait at all: a timer already due runs in the same turn of the loop, before it
  // reads the requests that came.
  CHECK(service::PauseAfterDelete(microseconds(400), false) == service::kQuietPause);
  CHECK(service::kQuietPause > microseconds(0));
}

}  // namespace
}  // namespace conclave
