// Unit tests: TranscriptFollower — delivers appended transcript bytes in bounded chunks, one
// chunk in flight per follower, from a cursor; ends with eof once the dispatch finished and
// every byte went out; a queued dispatch that ends without running is noticed through its
// task's events; Unfollow stops delivery.
#include "service/transcript_follower.h"

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "fake_clock.h"
#include "fake_command_runner.h"
#include "fake_launcher.h"
#include "service/core.h"
#include "store/migrations.h"

using namespace conclave;
using Chunk = service::TranscriptFollower::Chunk;

namespace {

struct World {
  std::string dir;
  std::unique_ptr<store::Database> db;
  boost::asio::io_context io;
  config::Config cfg;
  testing::FakeClock clock;
  testing::FakeLauncher launcher;
  testing::FakeCommandRunner commands;
  std::unique_ptr<service::Core> core;
  int64_t task = 0;

  World() {
    char t[] = "/tmp/cvuXXXXXX";
    dir = mkdtemp(t);
    db = std::make_unique<store::Database>(dir + "/t.db", store::Database::Options{});
    REQUIRE(store::ApplyMigrations(*db, store::EmbeddedMigrations()).ok());
    cfg.state_dir = dir;
    core = std::make_unique<service::Core>(io, cfg, *db, clock, launcher, commands);
    store::TerminalRecord term;
    term.handle = "t1";
    term.profile = "p";
    term.cwd = dir;
    term.state = domain::TerminalState::kBusy;
    term.created_ms = 1;
    core->terminals.Insert(term);
    store::TaskRecord tr;
    tr.title = "t";
    tr.brief = "b";
    tr.status = domain::TaskState::kDispatched;
    tr.role = "stage";
    tr.coordinator = "coordinator";
    tr.created_ms = tr.updated_ms = 1;
    task = core->tasks.Insert(tr);
  }
  ~World() {
    core.reset();
    db.reset();
    std::filesystem::remove_all(dir);
  }

  int64_t Dispatch(const std::string& state) {
    store::DispatchRecord d;
    d.task_id = task;
    d.target = "t1";
    d.terminal = state == "queued" ? "" : "t1";
    d.state = *domain::ParseDispatchState(state);
    d.coordinator = "coordinator";
    d.created_ms = 1;
    return core->dispatches.Insert(d);
  }
  void SetState(int64_t id, const std::string& state, bool with_event) {
    Status s = core->batcher.Write([&] {
      auto d = core->dispatches.Get(id);
      d->state = *domain::ParseDispatchState(state);
      core->dispatches.Update(*d);
      if (with_event) {
        domain::MessageRecord m;
        m.type = "status";
        m.from = "conclaved";
        m.to = "coordinator";
        m.subject = "dispatch " + state;
        m.task_id = task;
        m.dispatch_id = id;
        core->Emit(m);
      }
      return Status::Ok();
    });
    REQUIRE(s.ok());
    core->batcher.Flush();
  }
  void Append(int64_t id, const std::string& bytes) {
    std::string d = dir + "/dispatches/" + std::to_string(id);
    std::filesystem::create_directories(d);
    std::ofstream(d + "/transcript.log", std::ios::app | std::ios::binary) << bytes;
  }
};

}  // namespace

TEST_CASE("followers get appended bytes one chunk at a time, then eof after the run finished",
          "[service][transcript]") {
  World w;
  service::TranscriptFollower f(*w.core);
  int64_t id = w.Dispatch("running");
  w.Append(id, "abc");
  std::vector<Chunk> got;
  auto fid = f.Follow("t1", id, 0, 0, [&](Chunk c) { got.push_back(std::move(c)); });
  REQUIRE(fid.ok());
  REQUIRE(got.size() == 1);  // what was already written, at once
  CHECK(got[0].data == "abc");
  CHECK(got[0].next_cursor == 3);
  CHECK_FALSE(got[0].eof);

  w.Append(id, "def");
  f.OnAppended(id);
  CHECK(got.size() == 1);  // the first chunk is still in flight: nothing more is buffered
  f.Ready(fid.value());
  REQUIRE(got.size() == 2);
  CHECK(got[1].data == "def");
  CHECK(got[1].next_cursor == 6);
  f.Ready(fid.value());
  CHECK(got.size() == 2);  // nothing new, not finished: wait for a hook

  w.Append(id, "gh");
  w.SetState(id, "succeeded", false);
  f.OnFinished(id);
  REQUIRE(got.size() == 3);
  CHECK(got[2].data == "gh");
  CHECK(got[2].eof);
  CHECK(got[2].next_cursor == 8);
  CHECK(f.follower_count() == 0);
}

TEST_CASE("chunks are bounded and a finished dispatch is read from the cursor to its end",
          "[service][transcript]") {
  World w;
  service::TranscriptFollower f(*w.core);
  int64_t id = w.Dispatch("succeeded");
  w.Append(id, "0123456789ab");  // 12 bytes = 3 chunks of 4 exactly
  std::vector<Chunk> got;
  auto fid = f.Follow("", id, 2, 4, [&](Chunk c) { got.push_back(std::move(c)); });
  REQUIRE(fid.ok());
  while (got.size() < 4 && !got.back().eof) f.Ready(fid.value());
  REQUIRE(got.size() == 3);
  CHECK(got[0].data == "2345");
  CHECK(got[1].data == "6789");
  CHECK(got[2].data == "ab");  // shorter than a chunk: the end
  CHECK(got[2].eof);
  CHECK(got[2].next_cursor == 12);

  std::vector<Chunk> exact;
  auto e = f.Follow("t1", id, 0, 4, [&](Chunk c) { exact.push_back(std::move(c)); });
  REQUIRE(e.ok());
  while (!exact.back().eof) f.Ready(e.value());
  REQUIRE(exact.size() == 4);
  CHECK(exact[3].data.empty());  // a full last chunk is followed by an empty eof
}

TEST_CASE("follow requests are validated with the field named", "[service][transcript]") {
  World w;
  service::TranscriptFollower f(*w.core);
  int64_t id = w.Dispatch("running");
  auto sink = [](Chunk) {};
  auto unknown = f.Follow("", 999, 0, 0, sink);
  CHECK(unknown.status().code() == Code::kNotFound);
  CHECK(unknown.status().message().rfind("dispatch_id:", 0) == 0);
  CHECK(f.Follow("t1", id, -1, 0, sink).status().code() == Code::kInvalidArgument);
  CHECK(f.Follow("", 0, 0, 0, sink).status().code() == Code::kInvalidArgument);
  CHECK(f.Follow("other", id, 0, 0, sink).status().code() == Code::kNotFound);
  CHECK(f.Follow("nobody", 0, 0, 0, sink).status().message().rfind("handle:", 0) == 0);
  CHECK(f.follower_count() == 0);
}

TEST_CASE("an unfollowed follower gets nothing more", "[service][transcript]") {
  World w;
  service::TranscriptFollower f(*w.core);
  int64_t id = w.Dispatch("running");
  int calls = 0;
  auto fid = f.Follow("t1", id, 0, 0, [&](Chunk) { ++calls; });
  REQUIRE(fid.ok());
  CHECK(calls == 0);  // no file yet
  f.Unfollow(fid.value());
  w.Append(id, "late");
  f.OnAppended(id);
  f.OnFinished(id);
  CHECK(calls == 0);
  CHECK(f.follower_count() == 0);
}

TEST_CASE(
    "a queued dispatch ends with eof when cancelled unrun and hands over to the run hooks "
    "when it starts",
    "[service][transcript]") {
  World w;
  service::TranscriptFollower f(*w.core);
  size_t watchers = w.core->bus.watcher_count();

  int64_t cancelled = w.Dispatch("queued");
  std::vector<Chunk> got;
  REQUIRE(f.Follow("", cancelled, 0, 0, [&](Chunk c) { got.push_back(std::move(c)); }).ok());
  CHECK(got.empty());
  CHECK(w.core->bus.watcher_count() == watchers + 1);
  w.SetState(cancelled, "cancelled", true);  // CancelTask: no run, an event for the task
  REQUIRE(got.size() == 1);
  CHECK(got[0].eof);
  CHECK(got[0].data.empty());
  CHECK(w.core->bus.watcher_count() == watchers);

  int64_t started = w.Dispatch("queued");
  std::vector<Chunk> live;
  REQUIRE(f.Follow("", started, 0, 0, [&](Chunk c) { live.push_back(std::move(c)); }).ok());
  w.SetState(started, "running", true);  // the scheduler's "dispatch" event
  CHECK(live.empty());
  CHECK(w.core->bus.watcher_count() == watchers);  // the run's hooks take over
  w.Append(started, "out");
  f.OnAppended(started);
  REQUIRE(live.size() == 1);
  CHECK(live[0].data == "out");
}
