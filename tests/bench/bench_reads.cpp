// Bench section: read paths at 1k messages and at the big size (1M by default), and restart
// to first answer. The log is filled fast by writing rows with SQLite straight into a stopped
// daemon's database (the daemon created the schema on its first start), then the daemon is
// started on it. Distribution: 100 recipients, 100 senders, 10k tasks, the 8 types, 30% unread;
// the handles, task and type the reads ask for are frequent enough (h7 gets 20%, h3 sends 20%,
// task 123 has 10%) that every read returns its full 50 rows at 1k too, so the two sizes
// differ only in what the daemon must skip.
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "bench_sections.h"

namespace bench {
namespace {

const char* const kTypes[] = {"status",     "dispatch",      "worker_done", "heartbeat",
                              "escalation", "decision_gate", "question",    "reply"};

void Check(sqlite3* db, int rc, const char* what) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return;
  std::fprintf(stderr, "bench: fill: %s: %s\n", what, sqlite3_errmsg(db));
  std::exit(1);
}

// Appends rows until the log holds `total` messages, stamped within the last second or so
// (1,000 a millisecond, so an append after an earlier fill stays in time order). Older ones
// would be deleted by the daemon's retention pass at start (read messages after 90 days,
// heartbeats after 7): the log measured would be smaller, and the first repetition's reads
// would interleave with those deletes.
// With days_old > 0 they are that much older instead: a backlog for retention to delete.
void Fill(const std::string& path, long total, int days_old = 0) {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count() -
                         int64_t{days_old} * 86400000;
  sqlite3* db = nullptr;
  Check(db, sqlite3_open(path.c_str(), &db), "open");
  Check(db, sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
                             "PRAGMA cache_size=-1000000;", nullptr, nullptr, nullptr),
        "pragmas");
  sqlite3_stmt* count = nullptr;
  Check(db, sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM messages", -1, &count, nullptr),
        "count");
  sqlite3_step(count);
  long have = sqlite3_column_int64(count, 0);
  sqlite3_finalize(count);
  std::fprintf(stderr, "bench: reads: filling %ld → %ld messages\n", have, total);
  sqlite3_stmt* ins = nullptr;
  Check(db, sqlite3_prepare_v2(db,
                               "INSERT INTO messages(created_ms, type, priority, sender, "
                               "recipient, subject, body, payload, task_id, dispatch_id, "
                               "thread_id, reply_to, read) VALUES (?,?,'normal',?,?,?,?,'',?,0,"
                               "'t-fill',0,?)",
                               -1, &ins, nullptr),
        "prepare insert");
  Check(db, sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr), "begin");
  uint64_t x = 88172645463325252ull + have;  // xorshift: deterministic, cheap
  std::string body(120, 'b');
  int64_t read_rows = 0;
  for (long i = have; i < total; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    auto pick = [&](int shift, int hot, int percent, int n) {
      uint64_t r = x >> shift;
      return r % 100 < static_cast<uint64_t>(percent) ? hot : static_cast<int>((r >> 7) % n);
    };
    std::string to = "h" + std::to_string(pick(0, 7, 20, 100));
    std::string from = "h" + std::to_string(pick(14, 3, 20, 100));
    std::string subject = "fill " + std::to_string(i);
    sqlite3_bind_int64(ins, 1, now_ms - (total - i) / 1000);  // 1,000 a millisecond
    sqlite3_bind_text(ins, 2, kTypes[(x >> 28) % 8], -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 3, from.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ins, 4, to.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ins, 5, subject.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ins, 6, body.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_int64(ins, 7, 1 + pick(32, 122, 10, 10000));
    const bool read = (x >> 50) % 10 >= 3;
    read_rows += read ? 1 : 0;
    sqlite3_bind_int(ins, 8, read ? 1 : 0);
    Check(db, sqlite3_step(ins), "insert");
    sqlite3_reset(ins);
  }
  // No trigger counts an insert (migration 0015): the store marks a row read by an update,
  // which its trigger counts; rows inserted read here are counted here, in the same transaction.
  sqlite3_stmt* count_read = nullptr;
  Check(db, sqlite3_prepare_v2(db,
                               "INSERT INTO counters(name, n) VALUES ('messages_read', ?) "
                               "ON CONFLICT(name) DO UPDATE SET n = n + excluded.n",
                               -1, &count_read, nullptr),
        "prepare count");
  sqlite3_bind_int64(count_read, 1, read_rows);
  Check(db, sqlite3_step(count_read), "count read rows");
  sqlite3_finalize(count_read);
  Check(db, sqlite3_exec(db, "COMMIT; PRAGMA journal_mode=WAL;", nullptr, nullptr, nullptr),
        "commit");
  sqlite3_finalize(ins);
  sqlite3_close(db);
}

struct ReadPath {
  const char* name;
  std::function<bool(v1::Conclave::Stub&)> call;
};

std::vector<ReadPath> ReadPaths() {
  auto inbox = [](std::function<void(v1::InboxRequest&)> set) {
    return [set](v1::Conclave::Stub& s) {
      auto ctx = Ctx();
      v1::InboxRequest req;
      req.set_limit(50);
      set(req);
      v1::MessageList resp;
      return s.Inbox(ctx.get(), req, &resp).ok();
    };
  };
  return {
      {"Inbox to= one handle, limit 50", inbox([](auto& r) { r.set_to("h7"); })},
      {"Inbox from= one sender, limit 50", inbox([](auto& r) { r.set_from("h3"); })},
      {"Inbox task= one task, limit 50", inbox([](auto& r) { r.set_task_id(123); })},
      {"Inbox type= heartbeat, limit 50", inbox([](auto& r) { r.add_types("heartbeat"); })},
      {"Inbox to= + unread, limit 50", inbox([](auto& r) {
         r.set_to("h7");
         r.set_unread_only(true);
       })},
      // h100 sends nothing: the recipient's 20% of the log holds no match, which it walked
      // before 0009 (~0.5 s at 1M); now the sender's count, none, settles it.
      {"Inbox to= + from= with no match, limit 50", inbox([](auto& r) {
         r.set_to("h7");
         r.set_from("h100");
       })},
      {"Check (peek, limit 50)",
       [](v1::Conclave::Stub& s) {
         auto ctx = Ctx();
         v1::CheckRequest req;
         req.set_handle("h7");
         req.set_peek(true);
         req.set_limit(50);
         v1::MessageList resp;
         return s.Check(ctx.get(), req, &resp).ok();
       }},
      {"Wait to= with no match (1 ms timeout)",
       [](v1::Conclave::Stub& s) {
         auto ctx = Ctx();
         v1::WaitRequest req;
         req.set_to("h7");
         req.set_from_now(true);
         req.set_timeout_ms(1);
         v1::WaitReply resp;
         return s.Wait(ctx.get(), req, &resp).ok();
       }},
      {"Wait to= + from= with no match from seq 0 (1 ms timeout)",
       [](v1::Conclave::Stub& s) {
         auto ctx = Ctx();
         // A cursor at 0 makes it read before it parks (a from_now Wait reads nothing): here
         // the count of h100's entries, none, settles it. Both sides busy is not measured.
         v1::WaitRequest req;
         req.set_to("h7");
         req.set_from("h100");
         req.set_after_seq(0);
         req.set_timeout_ms(1);
         v1::WaitReply resp;
         return s.Wait(ctx.get(), req, &resp).ok();
       }},
      {"GetStatus",
       [](v1::Conclave::Stub& s) {
         auto ctx = Ctx();
         v1::GetStatusRequest req;
         v1::StatusReply resp;
         return s.GetStatus(ctx.get(), req, &resp).ok();
       }},
  };
}

using Samples = std::map<std::string, std::vector<std::vector<double>>>;  // path → per rep

void MeasureReads(Env& env, Daemon& d, Samples& out, const char* label, long messages) {
  constexpr int kN = 300;
  auto stub = Stub(d.socket(), 500);
  // The log measured is the log filled: nothing of it was deleted on the way.
  auto counts = Counts(*stub);
  int64_t held = counts["messages"];
  // The fill leaves 30% unread: the daemon's own counts, printed for a reader to compare.
  std::fprintf(stderr, "bench: reads at %s: the daemon holds %lld messages, %lld unread\n", label,
               static_cast<long long>(held), static_cast<long long>(counts["unread"]));
  if (held < messages) {
    std::fprintf(stderr, "bench: WARNING: %lld messages filled but %lld held; the rows at %s "
                 "measure a smaller log\n", static_cast<long long>(messages),
                 static_cast<long long>(held), label);
  }
  for (int rep = 0; rep < env.reps; ++rep) {
    std::fprintf(stderr, "bench: reads at %s, rep %d\n", label, rep + 1);
    for (const auto& p : ReadPaths()) {
      out[p.name].push_back(TimeCalls(kN, [&] { return p.call(*stub); }));
    }
  }
}

// The same log filled 100 days back: at start the retention pass deletes its read messages and
// heartbeats (~70%) in writes on the loop, while the reads are measured.
void RunReadsDuringRetention(Env& env, Samples& idle, const std::string& big_label) {
  constexpr int kN = 300;
  const char* const kPaths[] = {"Inbox to= one handle, limit 50", "GetStatus"};
  Daemon d;
  d.StartNew(env.daemon_bin, env.root + "/retention");
  std::vector<std::vector<double>> during[2];
  for (int rep = 0; rep < env.reps; ++rep) {
    d.Stop();
    std::filesystem::remove(d.db_path() + "-wal");
    std::filesystem::remove(d.db_path() + "-shm");
    std::filesystem::remove(d.db_path());
    d.Start();  // a fresh schema
    d.Stop();
    Fill(d.db_path(), env.messages, 100);
    d.Start();
    auto stub = Stub(d.socket(), 503 + rep);
    int64_t before = Counts(*stub)["messages"];
    auto paths = ReadPaths();
    for (int i = 0; i < 2; ++i) {
      for (const auto& p : paths) {
        if (p.name == std::string(kPaths[i])) {
          during[i].push_back(TimeCalls(kN, [&] { return p.call(*stub); }));
        }
      }
    }
    int64_t after = Counts(*stub)["messages"];
    std::fprintf(stderr, "bench: reads during retention, rep %d: %lld → %lld messages while "
                 "measured\n", rep + 1, static_cast<long long>(before),
                 static_cast<long long>(after));
  }
  d.Stop();
  for (int i = 0; i < 2; ++i) {
    for (double pct : {50.0, 99.0}) {
      std::string name = std::string(kPaths[i]) + (pct == 50 ? " p50" : " p99") +
                         " while retention deletes a " + big_label + " backlog";
      Row& r = env.table.Get(name, "µs", "idle at " + big_label);
      for (const auto& v : during[i]) r.conclave.push_back(Percentile(v, pct));
      for (const auto& v : idle[kPaths[i]]) r.bare.push_back(Percentile(v, pct));
    }
  }
  std::filesystem::remove_all(d.dir);
}

}  // namespace

void RunReads(Env& env) {
  Daemon d;
  d.StartNew(env.daemon_bin, env.root + "/reads");
  {
    auto stub = Stub(d.socket(), 501);
    for (int i = 0; i < 100; ++i) RegisterHandle(*stub, "h" + std::to_string(i));
  }
  d.Stop();
  Fill(d.db_path(), 1000);
  std::vector<double> restart_small, restart_big;
  restart_small.push_back(d.Start());
  Samples small, big;
  MeasureReads(env, d, small, "1k", 1000);
  for (int rep = 1; rep < env.reps; ++rep) {
    d.Stop();
    restart_small.push_back(d.Start());
  }
  d.Stop();
  Fill(d.db_path(), env.messages);
  std::string big_label = env.messages >= 1000000 && env.messages % 1000000 == 0
                              ? std::to_string(env.messages / 1000000) + "M"
                              : std::to_string(env.messages);
  for (int rep = 0; rep < env.reps; ++rep) {
    if (rep) d.Stop();
    restart_big.push_back(d.Start());
  }
  MeasureReads(env, d, big, big_label.c_str(), env.messages);
  d.Stop();

  for (const auto& p : ReadPaths()) {
    for (double pct : {50.0, 99.0}) {
      std::string name = std::string(p.name) + (pct == 50 ? " p50" : " p99") + " at " + big_label;
      Row& r = env.table.Get(name, "µs", "at 1k");
      for (const auto& v : big[p.name]) r.conclave.push_back(Percentile(v, pct));
      for (const auto& v : small[p.name]) r.bare.push_back(Percentile(v, pct));
    }
  }
  Row& r = env.table.Get("restart → first answer at " + big_label, "ms", "at 1k");
  for (double s : restart_big) r.conclave.push_back(s * 1000);
  for (double s : restart_small) r.bare.push_back(s * 1000);
  std::filesystem::remove_all(d.dir);
  RunReadsDuringRetention(env, big, big_label);
}

}  // namespace bench
