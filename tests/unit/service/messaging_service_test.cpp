// Unit tests: address resolution — handles and group addresses; the Watch backlog and a Wait's
// immediate answer show only committed messages (service/messaging_service).
#include <catch2/catch.hpp>
#include <optional>
#include <set>
#include <sqlite3.h>

#include "service_harness.h"

namespace conclave {
namespace {

// Emits (inside the caller's write) a status line from alice to the coordinator; its seq.
int64_t EmitStatus(service::Core& core, const std::string& subject) {
  domain::MessageRecord r;
  r.type = "status";
  r.from = "alice";
  r.to = "coordinator";
  r.subject = subject;
  core.Emit(r);
  return r.seq;
}

TEST_CASE("addresses resolve to handles — groups to their members — unknown is NOT_FOUND",
          "[service][address]") {
  testing::ServiceHarness h;
  h.AddProfile("pa", "fa");
  h.AddProfile("pb", "fb");
  auto& core = *h.core;
  core.handles.Insert({"alice", "handle", 1, false});
  core.handles.Insert({"gone", "handle", 1, true});
  using S = domain::TerminalState;
  for (auto [handle, p, cwd, state] : std::vector<std::tuple<std::string, std::string, std::string, S>>{
           {"t1", "pa", "/w/one", S::kIdle}, {"t2", "pb", "/w/two", S::kBusy},
           {"t3", "pa", "/w/two", S::kIdle}}) {
    core.handles.Insert({handle, "terminal", 1, false});
    core.terminals.Insert({handle, p, cwd, state, 0, 1});
  }
  auto& m = h.services->messaging;
  auto set = [&](const std::string& addr, const std::string& sender = "") {
    auto r = m.ResolveAddress(addr, sender);
    REQUIRE(r.ok());
    return std::set<std::string>(r->begin(), r->end());
  };
  CHECK(set("alice") == std::set<std::string>{"alice"});
  CHECK(set("@all", "alice") == std::set<std::string>{"coordinator", "t1", "t2", "t3"});
  CHECK(set("@idle") == std::set<std::string>{"t1", "t3"});
  CHECK(set("@family:fa") == std::set<std::string>{"t1", "t3"});
  CHECK(set("@profile:pb") == std::set<std::string>{"t2"});
  CHECK(set("@worktree:/w/two/") == std::set<std::string>{"t2", "t3"});
  CHECK(m.ResolveAddress("nobody", "").status().code() == Code::kNotFound);
  CHECK(m.ResolveAddress("gone", "").status().code() == Code::kNotFound);
  CHECK(m.ResolveAddress("@family:zz", "").status().code() == Code::kNotFound);
  CHECK(m.ResolveAddress("@bogus", "").status().code() == Code::kInvalidArgument);
  CHECK(m.ResolveAddress("", "").status().code() == Code::kInvalidArgument);
}


// A Watch's backlog is read on the loop's connection, which also sees the batch still open
// on it. A message from a batch that may roll back must never be streamed: its sequence
// number can be given again to another message, which the watcher would then skip.
TEST_CASE("the Watch backlog holds only committed messages, the rest arrive live once published",
          "[service][watch]") {
  testing::ServiceHarness h;
  auto& core = *h.core;
  auto& m = h.services->messaging;
  auto emit = [&](const std::string& subject) { return EmitStatus(core, subject); };
  auto subjects = [&](int64_t after) {
    auto page = m.Backlog({}, after, 500);
    REQUIRE(page.ok());
    std::vector<std::string> out;
    for (const auto& r : *page) out.push_back(r.subject);
    return out;
  };
  REQUIRE(core.batcher.Write([&] { return emit("first") > 0 ? Status::Ok() : Internal("no seq"); }).ok());
  h.Settle();  // committed and published
  REQUIRE(subjects(0) == std::vector<std::string>{"first"});

  // A request that wrote a message and then failed: its savepoint rolls back, and the next
  // message takes the same sequence number — all while the batch is still open.
  int64_t phantom = 0, real = 0;
  CHECK(core.batcher.Write([&] {
    phantom = emit("phantom");
    return Internal("the request failed after writing");
  }).code() == Code::kInternal);
  REQUIRE(core.batcher.Write([&] {
    real = emit("real");
    return Status::Ok();
  }).ok());
  CHECK(real == phantom);  // SQLite gives the rolled-back number again
  REQUIRE(core.db.InTransaction());
  CHECK(subjects(0) == std::vector<std::string>{"first"});  // nothing uncommitted

  // A watcher that went live after that backlog gets the real message once it commits.
  std::vector<std::string> live;
  m.Subscribe({}, m.LastSeq(), [&](const domain::MessageRecord& r) {
    live.push_back(r.subject);
    return true;
  });
  h.Settle();
  CHECK(live == std::vector<std::string>{"real"});
  CHECK(subjects(0) == std::vector<std::string>{"first", "real"});
}

// A Wait answers at once from the store, on the loop's connection, which also sees the batch
// still open on it. Answering with a message of that batch before its COMMIT would hand the
// client a cursor past a message that may roll back: the sequence number is given again to
// the next message, which that client's next Wait then skips.
TEST_CASE("a Wait answers at once only with committed messages, the rest once they commit",
          "[service][wait]") {
  testing::ServiceHarness h;
  auto& core = *h.core;
  auto& m = h.services->messaging;
  bool full = false;
  int message_reads = 0;
  h.db->SetFaultHookForTest([&](std::string_view sql) {
    if (sql.rfind("SELECT", 0) == 0 && sql.find("FROM messages") != std::string_view::npos) {
      ++message_reads;
    }
    return full && sql.find("COMMIT") != std::string_view::npos ? SQLITE_FULL : SQLITE_OK;
  });
  auto emit = [&](const std::string& subject) {
    return core.batcher.Write([&] {
      EmitStatus(core, subject);
      return Status::Ok();
    });
  };
  std::optional<service::WaitResult> got;
  auto wait = [&](int64_t after) {
    got.reset();
    service::WaitInput in;
    in.filter.to = "coordinator";
    in.after_seq = after;
    in.timeout_ms = 60000;
    m.Wait(in, [&](StatusOr<service::WaitResult> r) {
      REQUIRE(r.ok());
      got = std::move(r.value());
    });
  };
  auto subjects = [&] {
    std::vector<std::string> out;
    for (const auto& r : got->messages) out.push_back(r.subject);
    return out;
  };

  REQUIRE(emit("first").ok());
  h.Settle();
  int64_t first = m.LastSeq();
  REQUIRE(first > 0);
  message_reads = 0;
  wait(0);  // behind the cursor: answered at once from the store
  CHECK(message_reads > 0);
  REQUIRE(got);
  CHECK(subjects() == std::vector<std::string>{"first"});
  CHECK(got->cursor == first);

  // Written in this turn, not yet committed: the Wait parks, and wakes once it commits.
  REQUIRE(emit("second").ok());
  REQUIRE(core.db.InTransaction());
  message_reads = 0;
  wait(first);  // the cursor is at the last commit: parked without reading the store
  CHECK(message_reads == 0);
  CHECK_FALSE(got);
  h.Settle();
  REQUIRE(got);
  CHECK(subjects() == std::vector<std::string>{"second"});
  int64_t second = got->cursor;
  CHECK(second == m.LastSeq());

  // Behind the cursor there is a committed message and one of the open batch: only the
  // committed one is answered.
  REQUIRE(emit("third").ok());
  wait(first);
  REQUIRE(got);
  CHECK(subjects() == std::vector<std::string>{"second"});
  h.Settle();

  // A batch whose COMMIT fails (disk full) never reaches a waiter parked in its turn, and
  // the message written once the disk has room again takes the lost one's number: the waiter
  // gets it.
  full = true;
  REQUIRE(emit("lost").ok());
  int64_t lost = m.LastSeq() + 1;
  wait(m.LastSeq());
  h.Settle();
  REQUIRE(core.batcher.mode() == service::CommitBatcher::Mode::kDiskFull);
  CHECK_FALSE(got);
  full = false;
  core.batcher.SetProbeIntervalMs(10);
  REQUIRE(h.RunUntil([&] {
    h.clock.Advance(1000);
    return core.batcher.mode() == service::CommitBatcher::Mode::kWriting;
  }));
  REQUIRE(emit("real").ok());
  h.Settle();
  REQUIRE(got);
  CHECK(subjects() == std::vector<std::string>{"real"});
  CHECK(got->cursor == lost);
}

// Reads answer after the turn's COMMIT; a turn with nothing to commit has nothing to wait for,
// so a full disk (writes refused) must not turn status and inbox reads into errors.
TEST_CASE("with the disk full reads still answer, but not a read in a batch that fails",
          "[service][batcher]") {
  testing::ServiceHarness h;
  auto& core = *h.core;
  auto& m = h.services->messaging;
  bool full = false;
  h.db->SetFaultHookForTest([&](std::string_view sql) {
    return full && sql.find("COMMIT") != std::string_view::npos ? SQLITE_FULL : SQLITE_OK;
  });
  auto write = [&] {
    return core.batcher.Write([&] {
      EmitStatus(core, "s");
      return Status::Ok();
    });
  };
  full = true;
  REQUIRE(write().ok());
  std::optional<bool> in_failed_batch;
  m.AfterCommit([&](bool ok) { in_failed_batch = ok; });  // saw the batch that will roll back
  h.Settle();
  REQUIRE(core.batcher.mode() == service::CommitBatcher::Mode::kDiskFull);
  CHECK(in_failed_batch == false);

  std::optional<bool> idle_read;
  m.AfterCommit([&](bool ok) { idle_read = ok; });
  CHECK(idle_read == true);  // nothing pending: answered at once, and OK
  auto inbox = m.Inbox(domain::Caller{}, {}, 50);
  CHECK(inbox.ok());
  CHECK(write().code() == Code::kResourceExhausted);  // writes are still refused
}

}  // namespace
}  // namespace conclave
