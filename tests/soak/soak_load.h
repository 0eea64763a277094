// Soak load: 16 client threads against one conclaved that the soak kills and restarts. Each
// client mixes Sends (recorded once acknowledged), Waits, reads and dispatches to fake
// workers (recorded once Dispatch answered); a watcher follows the daemon's final worker_done
// messages. The ledger is what the daemon acknowledged: the checks compare the store with it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.h"

namespace soak {

namespace v1 = ::conclave::v1;

// Whether the daemon is up, and which incarnation: clients block while it is down.
class DaemonGate {
 public:
  void Up();
  void Down();
  // Blocks until up (or stopping); returns false when stopping.
  bool WaitUp();
  void Stop();
  bool stopping() const { return stop_.load(); }
  bool up() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool up_ = false;
  std::atomic<bool> stop_{false};
};

// What the daemon acknowledged, and what the soak saw it finish.
struct Ledger {
  std::mutex mu;
  std::map<std::string, int64_t> acked;  // message token -> seq from the Send reply
  std::set<int64_t> dispatched;          // tasks whose Dispatch answered OK
  std::set<int64_t> ended;               // tasks with a final worker_done seen by the watcher
  std::map<std::string, int64_t> errors; // per RPC and status code, e.g. "Send/UNAVAILABLE"
  std::atomic<int64_t> ops{0};
  size_t outstanding();  // dispatched, not ended
};

struct LoadConfig {
  std::string socket;
  std::string pid_dir;  // fake workers write their pids here
  int clients = 16;
  size_t max_outstanding = 8;  // dispatched tasks not ended yet, over all clients
  int terminals = 4;
  int pace_ms = 0;  // each client idles this long between calls (0: as fast as answered)
  uint64_t seed = 1;
};

// Channel that reconnects within ~100 ms once the daemon is back (gRPC's default backoff
// grows to minutes), one connection per client.
std::shared_ptr<grpc::Channel> SoakChannel(const std::string& socket, int distinct);

class Load {
 public:
  Load(LoadConfig cfg, DaemonGate& gate, Ledger& ledger) : cfg_(std::move(cfg)), gate_(gate),
                                                           ledger_(ledger) {}
  ~Load() { Join(); }
  // Handles and terminals; once per state directory (they are durable).
  bool Prepare();
  void Start();
  // Stops sending new work (dispatches too); the watcher keeps following.
  void Quiesce() { quiesce_ = true; }
  void Join();
  // Blocks until every dispatched task ended or timeout; returns whether they all did.
  bool WaitAllEnded(std::chrono::milliseconds timeout);

 private:
  void Client(int index);
  void Watcher();
  void Error(const std::string& rpc, const grpc::Status& s);
  std::string Brief(std::mt19937_64& rng, const std::string& token) const;

  LoadConfig cfg_;
  DaemonGate& gate_;
  Ledger& ledger_;
  std::atomic<bool> quiesce_{false};
  std::vector<std::thread> threads_;
  std::mutex ended_mu_;
  std::condition_variable ended_cv_;
};

}  // namespace soak
