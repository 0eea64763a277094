// Bench support: what every benchmark section shares — latency statistics, /proc readings of
// a process's CPU and RSS, child processes (a real conclaved, the bare ping server), gRPC
// stubs on unix sockets, and the result table (each figure next to its bare baseline).
// The bench measures and prints; it asserts nothing. Thread-safety: Table and Stats are
// single-threaded; Rpc() helpers are safe from any thread (one stub per thread is advised).
#pragma once

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "conclave/v1/conclave.grpc.pb.h"

namespace boost::asio {
class io_context;
}

namespace bench {

namespace v1 = ::conclave::v1;
using Clock = std::chrono::steady_clock;

double Micros(Clock::duration d);
double SecondsSince(Clock::time_point t0);
// p in [0,100] of values (copied, sorted); 0 for none.
double Percentile(std::vector<double> values, double p);

// CPU time (utime + stime) of a process, in microseconds, and its resident set in MiB.
double ProcessCpuMicros(pid_t pid);
double ProcessRssMiB(pid_t pid);
// CPU time of the calling thread, in microseconds.
double ThreadCpuMicros();
// One live thread of a process, read from /proc: its name (conclaved names its own:
// common/thread_name; the main thread, conclaved's loop, is "loop"), its on-CPU time in µs (from
// schedstat, in nanoseconds: utime + stime come in 10 ms ticks, each thread's rounded down on its
// own) and how often it went to sleep of itself (voluntary context switches: each a wait on a
// futex, epoll or a pipe, and a wake-up after it).
struct ThreadSample {
  std::string name;
  double cpu_us = 0;
  double sleeps = 0;
};
// The live threads of a process, by thread id.
std::map<pid_t, ThreadSample> SampleThreads(pid_t pid);
// What the threads did between two samples, summed by name. Matched by thread id: a thread
// started in between counts from zero, one that ended in between is in neither (its CPU is in
// ProcessCpuMicros only), and a thread that took over another's name is never taken for it.
std::map<std::string, ThreadSample> ThreadsSince(const std::map<pid_t, ThreadSample>& before,
                                                 const std::map<pid_t, ThreadSample>& after);
// The on-CPU time of pid's live threads since `before` (SampleThreads(pid)), in µs (from
// schedstat's ns), matched by thread id as ThreadsSince.
double CpuSince(const std::map<pid_t, ThreadSample>& before, pid_t pid);
// The calling thread's voluntary context switches so far (getrusage, RUSAGE_THREAD).
double ThreadSleeps();
// The names the dispatch rows split a dispatch's CPU by (`bench --check-baselines` finds them).
inline constexpr const char* kLoopThread = "loop";
inline constexpr const char* kQueueThread = "grpc-queue";  // with api_queue_thread only
inline constexpr const char* kWatchThread = "loop-watch";   // api/queue_loop.h
inline constexpr const char* kLauncherThread = "launcher";

// The machine's CPU time so far from the "cpu" line of /proc/stat, in clock ticks: all of it,
// and the time this guest's vCPUs were ready to run while the host ran something else (steal).
struct HostTicks {
  double total = 0, steal = 0;
};
HostTicks ReadHostTicks();
// The share of the CPUs' time stolen between two readings, in percent (0 when none passed).
double StealPercent(const HostTicks& from, const HostTicks& to);

// Blocks the calling thread for d without burning CPU (idle periods that are measured, e.g.
// "idle CPU over 10 s"; never used to wait for something to happen).
void IdleFor(std::chrono::milliseconds d);

// A child process started with posix_spawn; killed (SIGKILL) on destruction if still alive.
// `--daemon PATH` may name a wrapper that starts conclaved without exec (a shell script): the
// process that answers is then not the one spawned. AdoptServed names it (the pid conclaved
// reports in GetStatus); pid() is then that process, for its CPU and memory, and signals reach
// it through its pidfd (never a pid reused by another process).
// Every Child alive is registered: std::exit (the bench's way out of a failed section, which
// skips the destructors of automatic objects) still kills and reaps the processes it started.
class Child {
 public:
  Child();
  explicit Child(const std::vector<std::string>& argv, const std::string& log_path = "");
  ~Child();
  Child(Child&& o) noexcept;
  Child& operator=(Child&& o) noexcept;
  // The process to measure and signal: the served one once named, else the spawned one.
  pid_t pid() const { return served_ > 0 ? served_ : pid_; }
  pid_t spawned_pid() const { return pid_; }
  bool alive() const { return pid_ > 0; }
  // Takes pid, reported by the process answering on `unix:socket`, as the one to measure and
  // signal. kSame: it is the spawned process. kAdopted: a process of this pid namespace whose
  // arguments name the socket, started no earlier than the spawned one, now held by a pidfd
  // (opened before it is checked). kPrevious: it started before the spawned one, so a previous
  // daemon still answers. kNotOurs: anything else (no such process here, another namespace).
  enum class Served { kSame, kAdopted, kPrevious, kNotOurs };
  Served AdoptServed(pid_t pid, const std::string& socket);
  // SIGTERM to the served process, then waits for it and the spawned one (SIGKILL to both
  // after timeout). Returns the spawned one's wait status: a wrapper's when one was adopted
  // (the daemon's only if the wrapper passes it on, as `wait $!` does).
  int Stop(std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));

 private:
  void Release();
  static void ReleaseAll();  // at exit: every registered Child
  void Register();
  pid_t pid_ = -1;
  pid_t served_ = -1;   // > 0 only when it is not pid_
  int served_fd_ = -1;  // pidfd of served_
};

std::shared_ptr<grpc::Channel> UnixChannel(const std::string& socket, int distinct = 0);
std::unique_ptr<v1::Conclave::Stub> Stub(const std::string& socket, int distinct = 0);
// Polls GetStatus until it answers or timeout; returns whether it did, and the pid the daemon
// reports in served (when not null).
bool WaitUntilServing(const std::string& socket, std::chrono::milliseconds timeout,
                      pid_t* served = nullptr);

// A conclaved on its own state dir and socket, with the bench's profiles.
struct Daemon {
  std::string bin;
  std::string dir;  // holds st/ (state), d.sock, profiles/, work/ (not a git repo), log
  std::string socket() const { return dir + "/d.sock"; }
  std::string state_dir() const { return dir + "/st"; }
  std::string db_path() const { return dir + "/st/conclave.db"; }
  Child proc;
  // Starts and waits until it answers; returns seconds from spawn to the first answer.
  double Start();
  // The first start of `binary` in a new `directory`, with the bench profiles written there.
  void StartNew(const std::string& binary, const std::string& directory);
  void Stop() { proc.Stop(); }
  pid_t pid() const { return proc.pid(); }
};
// Makes dir with the bench profiles (bench-true: runs `true`; bench-8m: prints 8 MiB).
void WriteBenchProfiles(const std::string& dir);
// bench-true's profile (JSON) under another name and command (a JSON array): every other
// setting, the brief's delivery among them, is bench-true's.
std::string BenchTrueProfile(const std::string& name, const std::string& command);
std::string MakeTempDir(const std::string& tag);

// One call of a bare async server (bench_ping_server.cpp), from its request until it ends.
class BareCall {
 public:
  BareCall();
  const std::string& method() const { return ctx_.method(); }
  const grpc::ByteBuffer& request() const { return request_; }
  // Answers with an empty message (or `reply`) and ends the call; from any thread, once.
  void Reply();
  void Reply(grpc::ByteBuffer reply);
  // Ends the call with an error status instead; from any thread, once.
  void Fail(const grpc::Status& status);

 private:
  friend int ServeBareAsync(const std::string&, const char*, bool, boost::asio::io_context*,
                            const std::function<void(BareCall*)>&, bool,
                            std::chrono::microseconds);
  grpc::GenericServerContext ctx_;
  grpc::GenericServerAsyncReaderWriter stream_{&ctx_};
  grpc::ByteBuffer request_;
  grpc::Slice empty_{""};
  grpc::ByteBuffer reply_;
  enum State { kRequested, kReading, kFinishing } state_ = kRequested;
};
// Serves every method of a unix socket on gRPC's async API with one completion-queue thread,
// conclaved's API style: each call whose request is read goes to `handle`, on that thread or,
// with `loop`, posted to that loop run on the calling thread. `health`: gRPC's default health
// service beside it. Runs until the process is killed; 1 (and a line on stderr naming `what`)
// when it cannot listen.
// `one_thread` (with a loop): no queue thread; the calling thread polls the queue and runs the
// loop between its completions (the `oneloop` section).
// `poll_max` (without a loop): the queue thread polls the queue before it sleeps in it, as
// conclaved's loop does (common/poll_window.h, its loop_poll_us).
int ServeBareAsync(const std::string& socket, const char* what, bool health,
                   boost::asio::io_context* loop, const std::function<void(BareCall*)>& handle,
                   bool one_thread = false,
                   std::chrono::microseconds poll_max = std::chrono::microseconds(0));
// The bare baseline: a bare async server answering every call at once with an empty message.
// Runs in a child process: `bench --serve-ping S`.
int ServePing(const std::string& socket);
// The same on gRPC's callback API (the bench's baseline until conclaved moved to the async
// API): `bench --serve-callback-ping S`, for the `api` section.
int ServeCallbackPing(const std::string& socket);
// The ping server, but each call first burns the on-CPU time its request asks for: a
// SendRequest whose body is a number of µs (for the unary section's "as costly" rows).
int ServeSpinPing(const std::string& socket);
// The ping server whose queue thread polls before it sleeps, as conclaved's loop does at its
// default loop_poll_us, 100: `bench --serve-polling-ping S`, for the unary section.
int ServePollingPing(const std::string& socket);
constexpr std::chrono::microseconds kPollingPingMax{100};
// The bare loop server (bench_loop_server.cpp): the ping server's calls posted into one asio
// loop and finished from it; Wait parks, Send answers the parked. `bench --serve-loop S`;
// `health`: gRPC's default health service beside it (`bench --serve-async-loop-health S`).
// `one_thread`: the same on one thread (`bench --serve-one-loop S`).
int ServeLoop(const std::string& socket, bool health = false, bool one_thread = false);
// The bare loop server with the daemon's store behind its Send (bench_loop_server.cpp): `bench
// --serve-loop-store SOCKET DB`, DB a database conclaved created; `one_thread`: the same on one
// thread (`bench --serve-one-loop-store SOCKET DB`).
int ServeLoopStore(const std::string& socket, const std::string& db_path,
                   bool one_thread = false);

// One line of the result table: a figure over repetitions, and its bare baseline.
struct Row {
  std::string path;
  std::string unit;  // "µs", "ms", "/s", "MiB", "%"
  std::vector<double> conclave;
  std::vector<double> bare;  // empty: no baseline
  std::string bare_label;    // what the baseline is, e.g. "ping", "spawn+wait", "at 1k"
  bool higher_is_better = false;
};

class Table {
 public:
  Row& Add(const std::string& path, const std::string& unit, const std::string& bare_label,
           bool higher_is_better = false);
  // Finds or creates the row (reps append to the same row).
  Row& Get(const std::string& path, const std::string& unit, const std::string& bare_label,
           bool higher_is_better = false);
  std::string Markdown() const;

 private:
  std::vector<Row> rows_;
};

// "ok" or the status message, for progress output.
std::string Describe(const grpc::Status& s);
// A ClientContext with a deadline of timeout from now.
std::unique_ptr<grpc::ClientContext> Ctx(std::chrono::milliseconds timeout =
                                             std::chrono::milliseconds(30000));

}  // namespace bench
