// `bench --check-baselines`: the baseline servers are what the bench's ratios take them for.
// Every RPC ratio divides by the ping server, and the unary, send and wake sections set conclaved
// beside the bare loop servers; a baseline that drifted from the daemon's API style (a callback
// service registered beside it, gRPC's default health service on) or a loop server that
// answered a Wait at once would skew every ratio without any figure looking wrong. Checks, each
// printed as ok or FAILED on stderr (exit 1 if any failed):
//   - the ping and the loop server run one completion-queue thread ("grpc-queue",
//     SCHED_OTHER as conclaved's), every thread started before it SCHED_BATCH, and none of the
//     callback API's "nexting" threads; the loop server's main thread (its loop) runs
//     SCHED_OTHER;
//   - the callback ping does run nexting threads (so the check can tell the two apart);
//   - the ping answers a call with an empty message;
//   - the spinning ping (the unary section's server as costly as GetStatus) is of the ping's
//     style and burns the CPU a call asks for: 20 calls asking 2 ms each cost it at least 40 ms
//     of CPU, and 20 asking none less than a quarter of that;
//   - the polling ping (the unary section's ping server that polls as conclaved's loop does,
//     through the same common/poll_window) is of the ping's style and answers as it does;
//   - the loop server parks a Wait: counts it in GetStatus, leaves it unanswered for 300 ms
//     after, and answers it with OK once a Send comes;
//   - the loop server with the daemon's store (its database made by a conclaved started and
//     stopped for it) is of the same style (its checkpointer among the SCHED_BATCH threads),
//     parks and wakes the same way, and writes every Send it answered into its database
//     (counted after it is stopped, through the daemon's own store, as a restarted conclaved
//     would read it);
//   - the `oneloop` section's one-thread loop servers, without and with the store, run no
//     grpc-queue thread (the queue is polled on the main thread, SCHED_OTHER), park and wake
//     the same way, and the one with the store writes every Send it answered;
//   - the dispatch rows' bare spawn passes `true` the argument conclaved gives its worker;
//   - the split of a dispatch's CPU by thread finds conclaved's loop watcher and launcher's
//     thread by the names it reads (a renamed thread would leave its row at 0; the loop is the
//     main thread, found by its id).
// The ctest entry `bench: the baseline servers ...` runs it.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "bench_sections.h"
#include "store/database.h"

namespace bench {
namespace {

struct Threads {
  int queue = 0;         // named grpc-queue
  int queue_other = 0;   // of those, SCHED_OTHER
  int nexting = 0;       // the callback API's polling threads
  int main_policy = -1;
  // Threads but the main one started before the queue thread (a lower thread id): gRPC's and
  // the store's. gRPC starts some later, on demand, from whichever thread needs one (the queue
  // thread's then run SCHED_OTHER, as in the daemon): those are not counted.
  int others = 0;
  int others_batch = 0;  // of those, SCHED_BATCH
};

// Field 41 of /proc/PID/task/TID/stat is the policy (0 SCHED_OTHER, 3 SCHED_BATCH).
Threads ReadThreads(pid_t pid) {
  struct Entry {
    long tid;
    std::string comm;
    int policy;
  };
  std::vector<Entry> entries;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::ifstream in(e.path().string() + "/stat");
    std::string line;
    std::getline(in, line);
    auto open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close + 2 > line.size()) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string field;
    int i = 3;
    for (; i <= 41 && rest >> field; ++i) {
    }
    int policy = i == 42 ? std::atoi(field.c_str()) : -1;  // -1: a stat line too short
    entries.push_back({std::atol(e.path().filename().c_str()),
                       line.substr(open + 1, close - open - 1), policy});
  }
  Threads t;
  long queue_tid = LONG_MAX;
  for (const auto& e : entries) {
    if (e.comm == "grpc-queue") queue_tid = std::min(queue_tid, e.tid);
  }
  for (const auto& e : entries) {
    if (e.tid == pid) {
      t.main_policy = e.policy;
    } else if (e.comm == "grpc-queue") {
      ++t.queue;
      if (e.policy == SCHED_OTHER) ++t.queue_other;
    } else if (e.tid < queue_tid) {
      ++t.others;
      if (e.policy == SCHED_BATCH) ++t.others_batch;
    }
    if (e.comm == "nexting_thread") ++t.nexting;
  }
  return t;
}

bool Report(bool ok, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  return ok;
}

// one_thread: the `oneloop` section's servers, which poll the queue on their main thread (the
// loop's): no queue thread of their own. gRPC's threads are not checked there: it starts some
// later, from whichever thread needs one, and there that is the SCHED_OTHER main thread.
bool CheckAsyncStyle(const char* name, pid_t pid, bool loop, bool one_thread = false) {
  Threads t = ReadThreads(pid);
  if (one_thread) {
    bool ok = Report(t.queue == 0, std::string(name) + ": no grpc-queue thread (found " +
                                       std::to_string(t.queue) + ")");
    ok &= Report(t.nexting == 0, std::string(name) + ": no nexting_thread (found " +
                                     std::to_string(t.nexting) + ")");
    ok &= Report(t.main_policy == SCHED_OTHER,
                 std::string(name) + ": its loop and queue run SCHED_OTHER");
    return ok;
  }
  bool ok = Report(t.queue == 1, std::string(name) + ": one grpc-queue thread (found " +
                                     std::to_string(t.queue) + ")");
  ok &= Report(t.queue_other == t.queue, std::string(name) + ": grpc-queue runs SCHED_OTHER");
  ok &= Report(t.others > 0 && t.others_batch == t.others,
               std::string(name) + ": every thread started before it runs SCHED_BATCH (" +
                   std::to_string(t.others_batch) + " of " + std::to_string(t.others) + ")");
  ok &= Report(t.nexting == 0, std::string(name) + ": no nexting_thread (found " +
                                   std::to_string(t.nexting) + ")");
  if (loop) {
    ok &= Report(t.main_policy == SCHED_OTHER, std::string(name) + ": its loop runs SCHED_OTHER");
  }
  return ok;
}

// A Wait on the loop server: parked until a Send, then answered OK. Every call has a deadline,
// so a server that hangs fails the check instead of hanging it.
bool CheckParkAndWake(v1::Conclave::Stub& stub, const std::string& name) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status status;
  auto ctx = Ctx(std::chrono::seconds(20));
  v1::WaitRequest req;
  req.set_to("check");
  req.set_timeout_ms(20000);
  v1::WaitReply resp;
  stub.async()->Wait(ctx.get(), &req, &resp, [&](grpc::Status s) {
    std::lock_guard<std::mutex> lk(mu);
    status = std::move(s);
    done = true;
    cv.notify_one();
  });
  // Parked once the server counts it: asked again after each answer (each a round trip, no
  // sleep), for at most 10 s, and no longer once the server stops answering.
  constexpr auto kCall = std::chrono::seconds(2);
  auto until = Clock::now() + std::chrono::seconds(10);
  bool answered = true;
  int64_t waiters = 0;
  while (answered && Clock::now() < until &&
         (waiters = Counts(stub, nullptr, kCall, &answered)["waiters"]) < 1) {
  }
  bool ok = Report(waiters == 1, name + ": a Wait is counted as parked");
  {
    // Still unanswered 300 ms after it was counted: parked, not answered late. A window for a
    // negative (a correct server never answers here), not a synchronisation: it cannot make a
    // correct server fail, only a late answer past it go unseen.
    std::unique_lock<std::mutex> lk(mu);
    bool early = cv.wait_for(lk, std::chrono::milliseconds(300), [&] { return done; });
    ok &= Report(!early, name + ": the Wait is not answered before a Send");
  }
  ok &= Report(SendTo(stub, "check", "wake", kCall), name + ": a Send is answered");
  std::unique_lock<std::mutex> lk(mu);
  bool woke = cv.wait_for(lk, std::chrono::seconds(5), [&] { return done; });
  ok &= Report(woke && status.ok(), name + ": the Send answers the parked Wait with OK");
  if (!woke) ctx->TryCancel();
  cv.wait(lk, [&] { return done; });  // the callback has run (TryCancel ends the call)
  return ok;
}

// The messages in the database at path, read as a restarted conclaved reads them (-1: the
// database could not be read).
int64_t CountMessages(const std::string& path) {
  try {
    conclave::store::Database db(path, conclave::store::Database::Options{});
    auto st = db.Prepare("SELECT count(*) FROM messages");
    return st.Step() ? st.Int(0) : -1;
  } catch (const conclave::store::StoreError& e) {
    std::fprintf(stderr, "bench: %s: %s\n", path.c_str(), e.what());
    return -1;
  }
}

// The loop server with the daemon's store, on a database conclaved made: the same style, park
// and wake, and one message written for every Send it answered. one_thread: its one-thread
// form (`--serve-one-loop-store`).
bool CheckLoopStore(const std::string& self, const std::string& daemon_bin,
                    const std::string& root, bool one_thread) {
  const std::string name =
      one_thread ? "one-thread loop server with the store" : "loop server with the store";
  const std::string tag = one_thread ? "/one-store" : "/store";
  Daemon maker;
  maker.StartNew(daemon_bin, root + tag);
  maker.Stop();
  const int64_t before = CountMessages(maker.db_path());
  const std::string socket = root + tag + ".sock";
  Child server({self, one_thread ? "--serve-one-loop-store" : "--serve-loop-store", socket,
                maker.db_path()},
               socket + ".log");
  bool ok = Report(WaitUntilServing(socket, std::chrono::seconds(30)), name + ": answers");
  int answered = 0;
  if (ok) {
    // Its checkpointer among the threads started before the queue's: SCHED_BATCH, as the
    // daemon's (started before the loop runs, common/runtime.h). The one-thread form's other
    // threads are not checked (CheckAsyncStyle).
    ok &= CheckAsyncStyle(name.c_str(), server.pid(), true, one_thread);
    auto stub = Stub(socket, 3);
    ok &= CheckParkAndWake(*stub, name);
    answered = 1;  // its Send (a failed one fails the check above)
    for (int i = 0; i < 5; ++i) {
      if (SendTo(*stub, "check", "write", std::chrono::seconds(2))) ++answered;
    }
  }
  server.Stop();
  const int64_t after = CountMessages(maker.db_path());
  ok &= Report(before >= 0 && after - before == answered,
               name + ": " + std::to_string(answered) + " Sends answered, " +
                   std::to_string(after - before) + " messages written");
  return ok;
}

// The dispatch rows' bare spawn runs the child the daemon's worker is: conclaved gives a command
// profile with "brief": "arg" (bench-true's own settings, its command replaced by one that
// writes its arguments down) the brief as its one last argument, and the bare spawn passes
// DispatchWorkerArgument(). A daemon that renders the brief otherwise fails this.
bool CheckDispatchArgument(const std::string& daemon_bin, const std::string& root) {
  const std::string name = "dispatch baseline";
  const std::string dir = root + "/args";
  std::filesystem::create_directories(dir + "/profiles");
  std::ofstream(dir + "/profiles/bench-args.json") << BenchTrueProfile(
      "bench-args", R"(["/bin/sh", "-c", "printf '%s\\0' \"$@\" > args.out", "sh"])");
  Daemon d;
  d.StartNew(daemon_bin, dir);
  auto stub = Stub(d.socket(), 4);
  const std::string cwd = dir + "/work";
  bool ok = Report(CreateTerminal(*stub, "bench-args", "args", cwd), name + ": a terminal");
  if (ok) {
    int64_t task = CreateTask(*stub, kDispatchBrief);
    ok &= Report(task > 0 && Dispatch(*stub, task, "args") &&
                     WaitDone(*stub, task, std::chrono::seconds(30)),
                 name + ": a dispatch of the bench's brief ends in worker_done");
  }
  const auto threads = ThreadsSince({}, SampleThreads(d.pid()));
  for (const char* thread : {kWatchThread, kLauncherThread}) {
    ok &= Report(threads.count(thread) == 1,
                 name + ": the CPU split finds conclaved's thread \"" + thread + "\"");
  }
  d.Stop();
  std::ifstream in(cwd + "/args.out", std::ios::binary);
  std::stringstream got;
  got << in.rdbuf();
  const std::string want = DispatchWorkerArgument() + '\0';
  ok &= Report(got.str() == want, name + ": the worker's arguments are the bare spawn's (" +
                                      std::to_string(got.str().size()) + " bytes, the spawn's " +
                                      std::to_string(want.size()) + ")");
  return ok;
}

// The spinning ping burns what each call asks for (bench_rpc.cpp's RunUnary): a server that
// burnt nothing would make every daemon look as costly as it.
bool CheckSpin(const std::string& socket, pid_t pid) {
  auto stub = Stub(socket, 6);
  auto burn = [&](const char* us) {
    v1::SendRequest req;
    req.set_body(us);
    const auto t0 = SampleThreads(pid);
    int answered = 0;
    for (int i = 0; i < 20; ++i) {
      auto ctx = Ctx(std::chrono::seconds(10));
      v1::SendReply resp;
      if (stub->Send(ctx.get(), req, &resp).ok()) ++answered;
    }
    return answered == 20 ? CpuSince(t0, pid) : -1.0;
  };
  const double spun = burn("2000"), idle = burn("0");
  return Report(spun >= 40000 && idle >= 0 && idle < spun / 4,
                "spinning ping: 20 calls asking 2 ms of CPU each cost it " +
                    std::to_string(static_cast<int>(spun)) + " µs, 20 asking none " +
                    std::to_string(static_cast<int>(idle)) + " µs");
}

}  // namespace

int CheckBaselines(const std::string& self, const std::string& daemon_bin) {
  const std::string root = MakeTempDir("bench-check");
  struct Server {
    const char* name;
    const char* mode;
    std::string socket;
    Child child;
  } servers[] = {{"ping", "--serve-ping", root + "/ping.sock", {}},
                 {"loop server", "--serve-loop", root + "/loop.sock", {}},
                 {"callback ping", "--serve-callback-ping", root + "/cb.sock", {}},
                 {"one-thread loop server", "--serve-one-loop", root + "/one.sock", {}},
                 {"spinning ping", "--serve-spin-ping", root + "/spin.sock", {}},
                 {"polling ping", "--serve-polling-ping", root + "/polling.sock", {}}};
  bool ok = true;
  for (auto& s : servers) {
    s.child = Child({self, s.mode, s.socket}, s.socket + ".log");
    ok &= Report(WaitUntilServing(s.socket, std::chrono::seconds(30)),
                 std::string(s.name) + ": answers on " + s.socket);
  }
  if (ok) {
    ok &= CheckAsyncStyle("ping", servers[0].child.pid(), false);
    ok &= CheckAsyncStyle("loop server", servers[1].child.pid(), true);
    Threads cb = ReadThreads(servers[2].child.pid());
    ok &= Report(cb.nexting > 0, "callback ping: nexting threads seen (found " +
                                     std::to_string(cb.nexting) + ")");
    auto ping = Stub(servers[0].socket, 1);
    auto ctx = Ctx(std::chrono::seconds(2));
    v1::GetStatusRequest req;
    v1::StatusReply resp;
    resp.set_pid(1);  // an empty reply clears it
    grpc::Status st = ping->GetStatus(ctx.get(), req, &resp);
    ok &= Report(st.ok() && resp.ByteSizeLong() == 0, "ping: answers a call with an empty message");
    auto loop = Stub(servers[1].socket, 2);
    ok &= CheckParkAndWake(*loop, "loop server");
    ok &= CheckAsyncStyle("one-thread loop server", servers[3].child.pid(), true, true);
    auto one = Stub(servers[3].socket, 5);
    ok &= CheckParkAndWake(*one, "one-thread loop server");
    ok &= CheckAsyncStyle("spinning ping", servers[4].child.pid(), false);
    ok &= CheckSpin(servers[4].socket, servers[4].child.pid());
    ok &= CheckAsyncStyle("polling ping", servers[5].child.pid(), false);
    auto polling = Stub(servers[5].socket, 6);
    auto pctx = Ctx(std::chrono::seconds(2));
    resp.set_pid(1);
    st = polling->GetStatus(pctx.get(), req, &resp);
    ok &= Report(st.ok() && resp.ByteSizeLong() == 0,
                 "polling ping: answers a call with an empty message");
  }
  for (auto& s : servers) s.child.Stop();
  if (ok) {
    ok &= CheckLoopStore(self, daemon_bin, root, false);
    ok &= CheckLoopStore(self, daemon_bin, root, true);
  } else {
    std::fprintf(stderr, "skipped: the loop servers with the store (a check above failed)\n");
  }
  ok &= CheckDispatchArgument(daemon_bin, root);
  std::filesystem::remove_all(root);
  std::fprintf(stderr, "%s\n", ok ? "bench: the baselines are as the bench takes them"
                                  : "bench: a baseline is not what the bench takes it for");
  return ok ? 0 : 1;
}

}  // namespace bench
