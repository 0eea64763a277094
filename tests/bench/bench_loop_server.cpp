// The bare loop server: the structure DESIGN.md prescribes for conclaved, with nothing else in
// it. gRPC's async API with one completion-queue thread (the same build and settings as the
// ping server, bench_ping_server.cpp) posts every call into one Boost.Asio io_context on the
// main thread, SCHED_OTHER like conclaved's loop, and each reply is finished from there. No
// store, no checks, no request parsed:
//   - `Wait` parks (it is answered by the next `Send`),
//   - `Send` answers every parked `Wait`, then itself, with an empty message,
//   - `GetStatus` answers a StatusReply whose counts["waiters"] is the number parked (what
//     the bench's wake client polls to know its Wait is parked),
//   - any other method answers an empty message.
// So a round trip through it is a ping plus the hop to the loop and the reply finished from
// the loop, and a wake through it is what a Send → Wait wake costs in that structure before
// the daemon stores or checks anything. `bench --serve-loop SOCKET` runs it in a child process;
// it ends on SIGTERM. `bench --serve-async-loop-health SOCKET` runs the same server with gRPC's
// default health service registered beside it (the `api` section).
// `bench --serve-loop-store SOCKET DB` runs it with the daemon's store behind its Send: each Send
// first writes a fixed message into DB (a database conclaved created, so its schema and indexes)
// through the daemon's own write path — store::MessageStore::Insert inside the commit batcher's
// group commit (service/commit_batcher), its checkpointer thread beside the loop — and the parked
// Waits and the Send are answered once that write committed, as conclaved acknowledges only what
// is durable. Still no checks, no request parsed, no caller identified and no message built from
// the request: between it and conclaved is the daemon's API and service code alone.
// `bench --serve-one-loop SOCKET` and `--serve-one-loop-store SOCKET DB` run the same two with no
// queue thread: the main thread polls the completion queue and runs the loop between its
// completions (ServeBareAsync; the `oneloop` section, bench_one_loop.cpp).
#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <memory>
#include <vector>

#include "bench_support.h"
#include "common/clock.h"
#include "common/runtime.h"
#include "service/commit_batcher.h"
#include "store/database.h"
#include "store/message_store.h"

namespace bench {
namespace {

bool EndsWith(const std::string& s, const char* tail) {
  std::string t(tail);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

// The daemon's write path for a Send, on the loop (ServeLoopStore).
class StoreWrite {
 public:
  StoreWrite(boost::asio::io_context& io, const std::string& db_path)
      : db_(db_path, conclave::store::Database::Options{}),
        messages_(db_),
        clock_(io),
        batcher_(io, db_, clock_, [](const std::vector<conclave::domain::MessageRecord>&) {}) {}
  // Writes one message in the turn's batch; then(ok) once it committed (or failed).
  void Send(const std::function<void(bool)>& then) {
    conclave::Status s = batcher_.Write([this] {
      conclave::domain::MessageRecord m;
      m.created_ms = conclave::NowMs();
      m.type = "status";
      m.from = "bench";
      m.to = "bench-sink";
      m.subject = "load";
      m.body = "a short status line from the benchmark";
      char thread[16];
      std::snprintf(thread, sizeof thread, "t-%012llx",
                    static_cast<unsigned long long>(++count_ & 0xffffffffffffULL));
      m.thread_id = thread;
      messages_.Insert(m);
      return conclave::Status::Ok();
    });
    if (!s.ok()) {
      std::fprintf(stderr, "bench: the loop server's store: %s\n", s.message().c_str());
      then(false);
      return;
    }
    batcher_.AfterCommit(then);
  }

  int64_t commits() const { return batcher_.commits(); }

 private:
  conclave::store::Database db_;
  conclave::store::MessageStore messages_;
  conclave::SystemClock clock_;
  conclave::service::CommitBatcher batcher_;
  uint64_t count_ = 0;
};

int Serve(const std::string& socket, bool health, const std::string& db_path, bool one_thread) {
  boost::asio::io_context io;
  std::unique_ptr<StoreWrite> store;
  if (!db_path.empty()) {
    // Its checkpointer thread SCHED_BATCH, as the daemon's (common/runtime.h).
    conclave::BeginBackgroundThreads();
    try {
      store = std::make_unique<StoreWrite>(io, db_path);
    } catch (const conclave::store::StoreError& e) {
      std::fprintf(stderr, "bench: the loop server cannot open %s: %s\n", db_path.c_str(),
                   e.what());
      return 1;
    }
    conclave::EndBackgroundThreads();
  }
  std::vector<BareCall*> parked;  // on the loop
  auto answer = [&parked](BareCall* c) {
    for (BareCall* w : parked) w->Reply();
    parked.clear();
    c->Reply();
  };
  // A Send the store could not write fails, as conclaved's would: never answered as if stored.
  auto fail = [](BareCall* c) {
    c->Fail(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the store did not commit"));
  };
  return ServeBareAsync(socket, "loop", health, &io, [&](BareCall* c) {
    const std::string& m = c->method();
    if (EndsWith(m, "/Wait")) {
      parked.push_back(c);
    } else if (EndsWith(m, "/Send")) {
      if (!store) {
        answer(c);
      } else {
        store->Send([&answer, &fail, c](bool ok) {
          if (ok) {
            answer(c);
          } else {
            fail(c);
          }
        });
      }
    } else if (EndsWith(m, "/GetStatus")) {
      v1::StatusReply status;
      (*status.mutable_counts())["waiters"] = static_cast<int64_t>(parked.size());
      if (store) (*status.mutable_counts())["commits"] = store->commits();
      std::string bytes = status.SerializeAsString();
      grpc::Slice slice(bytes);
      c->Reply(grpc::ByteBuffer(&slice, 1));
    } else {
      c->Reply();
    }
  }, one_thread);
}

}  // namespace

int ServeLoop(const std::string& socket, bool health, bool one_thread) {
  return Serve(socket, health, "", one_thread);
}

int ServeLoopStore(const std::string& socket, const std::string& db_path, bool one_thread) {
  return Serve(socket, false, db_path, one_thread);
}

}  // namespace bench
