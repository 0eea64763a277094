// Bench sections: each measures one group of rows of the table, repetition by repetition,
// against the bare baseline measured in the same repetition. Env holds what they share: the
// running ping server and conclaved, the options and the table. Called from main only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bench_support.h"

namespace bench {

struct Env {
  std::string self;         // this binary (re-run as the ping and loop servers)
  std::string daemon_bin;   // conclaved under test
  std::string root;         // temp dir for everything
  std::string ping_socket;
  Child ping;               // the bare server
  std::string loop_socket;
  Child loop;               // the bare loop server (unary, send, wake; stopped after them)
  std::string loop_store_socket;
  Child loop_store;         // the same with the daemon's store (send, wake; stopped after them)
  Daemon daemon;            // shared by the rpc and dispatch sections
  int reps = 3;
  long messages = 1000000;  // size of the big log in the read-path section
  int idle_s = 10;          // idle window for the parked-waits CPU figure
  Table table;
};

// Rows: unary ping vs GetStatus vs ListHandles vs a round trip through the bare loop server;
// then, in stretches of their own, the daemon's CPU per GetStatus against the ping server's per
// ping, and GetStatus against a ping server that burns the difference before each reply.
void RunUnary(Env& env);
// Rows (section `api`, only when named): round trip p50 and server CPU per call of a callback
// ping server and of bare loop servers, against the ping server.
void RunApiStyle(Env& env);
// `bench --check-baselines` (bench_check.cpp): 0 when the ping and the loop servers run in the
// daemon's API style, park a Wait until a Send, and the one with the store writes each Send it
// answers; 1 (and why, on stderr) if not. daemon_bin makes that server's database.
int CheckBaselines(const std::string& self, const std::string& daemon_bin);
// Rows: Send ack latency, throughput and daemon CPU per op at 1 and 16 clients; throughput and
// CPU per Send of the bare loop servers, and Sends a commit of conclaved and the store one.
void RunSend(Env& env);
// Rows: Send → parked Wait wake latency, of conclaved and of the two bare loop servers.
void RunWake(Env& env);
// Rows (section `oneloop`, only when named): the bare loop servers with their queue and loop on
// one thread against the same on two (bench_one_loop.cpp).
void RunOneLoop(Env& env);
// Rows: a Send's SQL transaction alone vs a bare one-row SQLite write.
void RunSql(Env& env);
// Rows: 10k parked Waits — RSS, idle CPU, one wake — vs none parked.
void RunPark(Env& env);
// Rows: Dispatch → worker_done of `true` vs posix_spawn+waitpid; CPU; 8 in flight.
void RunDispatch(Env& env);
// The dispatch rows' task brief, and the one argument bench-true's worker gets from it (the
// brief as the daemon renders it, "brief": "arg"): the bare spawns pass the same.
extern const char kDispatchBrief[];
std::string DispatchWorkerArgument();
// The dispatch rows' calls (each reports a failure on stderr). WaitDone: until the daemon's own
// worker_done for task is committed, for at most `within` (false if it is not by then).
bool CreateTerminal(v1::Conclave::Stub& stub, const std::string& profile,
                    const std::string& handle, const std::string& cwd);
int64_t CreateTask(v1::Conclave::Stub& stub, const std::string& brief);
bool Dispatch(v1::Conclave::Stub& stub, int64_t task, const std::string& to);
bool WaitDone(v1::Conclave::Stub& stub, int64_t task,
              std::chrono::seconds within = std::chrono::seconds(120));
// Rows: wake and GetStatus while 4 workers finish with 8 MiB of output each, vs idle.
void RunLoad(Env& env);
// Rows: read paths at 1k and at the big size; restart to first answer.
void RunReads(Env& env);

// ---- helpers shared by the sections ----
struct LoadResult {
  double qps = 0;
  double cpu_per_op_us = 0;
  std::vector<double> latencies;  // of every op
  long ops = 0;
  int64_t commits = 0;  // the server's GetStatus counts["commits"] over the load (0: none kept)
};
// threads clients, each on its own connection, calling Send for `seconds`; server's CPU (its
// pid) over the load.
LoadResult SendLoad(const std::string& socket, pid_t server, int threads, double seconds);
// Latencies (µs) of n sequential calls of fn (fn returns false on failure: counted, reported).
std::vector<double> TimeCalls(int n, const std::function<bool()>& fn);
bool RegisterHandle(v1::Conclave::Stub& stub, const std::string& name);
bool SendTo(v1::Conclave::Stub& stub, const std::string& to, const std::string& subject,
            std::chrono::milliseconds timeout = std::chrono::seconds(30));
// GetStatus's counts (empty, and *answered false, when the call fails).
std::map<std::string, int64_t> Counts(v1::Conclave::Stub& stub, int64_t* last_seq = nullptr,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(30),
                                     bool* answered = nullptr);
// n times: park a Wait for `handle`, send it one message, time send-start → Wait returned (µs).
std::vector<double> WakeLatencies(v1::Conclave::Stub& stub, const std::string& handle, int n);
// Unary ping latencies (µs) against the bare server (a new channel, or the given stub's).
std::vector<double> PingLatencies(const Env& env, int n);
std::vector<double> PingLatencies(v1::Conclave::Stub& ping, int n);
// Runs each of `parts` in turn, `chunk` calls at a time, until each has n samples: the daemon
// and its bare baseline then share the host's quiet and noisy phases instead of one getting
// the first half of a rep and the other the second. Odd rounds run the parts in reverse
// order. Returns the samples of each part.
std::vector<std::vector<double>> Interleaved(
    int n, int chunk, const std::vector<std::function<std::vector<double>(int)>>& parts);

}  // namespace bench
