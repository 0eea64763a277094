// soak: a real conclaved under mixed load (16 clients sending, waiting, reading and
// dispatching to fake workers that print, hang, leave grandchildren and escapees, spew and
// fail), killed with SIGKILL at random moments and restarted. After each kill (the daemon
// down, its database read with SQLite) and at the end it checks that every acknowledged
// message is stored exactly once with its seq, that no task ends twice and every dispatched
// task ends once, PRAGMA integrity_check, that no worker of a killed daemon survives the next
// daemon's recovery and none is left at the end, and the daemon's RSS after the run against
// a fresh start (each after --final-s seconds of the load; less what SQLite holds, whose page
// caches fill up to their configured size as the database grows). Prints its figures; exits 1 on any problem.
//
//   soak [--kills N] [--seed S] [--clients C] [--final-s S] [--pace-ms MS] [--daemon PATH]
//        [--keep]            --pace-ms: each client idles between calls (long runs: keeps
//                            the database, and so each integrity_check, to a size)
//   soak --mixed-s S ...   no kills: S seconds of load sampled every second; 0 errors, RSS
//                          flat (first vs last minute within 5%), no fd growth
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include "bench_support.h"
#include "soak_checks.h"
#include "soak_load.h"

namespace {

using namespace std::chrono_literals;
using bench::Clock;

struct Options {
  int kills = 1000;
  uint64_t seed = 0;
  int clients = 16;
  int final_s = 10;
  int mixed_s = 0;
  int pace_ms = 0;
  bool keep = false;
  std::string daemon = CONCLAVED_BIN;
};

Options Parse(int argc, char** argv) {
  Options o;
  o.seed = static_cast<uint64_t>(Clock::now().time_since_epoch().count()) % 1000000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "soak: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--kills") o.kills = std::stoi(next());
    else if (a == "--seed") o.seed = std::stoull(next());
    else if (a == "--clients") o.clients = std::stoi(next());
    else if (a == "--final-s") o.final_s = std::stoi(next());
    else if (a == "--mixed-s") o.mixed_s = std::stoi(next());
    else if (a == "--pace-ms") o.pace_ms = std::stoi(next());
    else if (a == "--daemon") o.daemon = next();
    else if (a == "--keep") o.keep = true;
    else {
      std::fprintf(stderr, "soak: unknown argument %s\n", a.c_str());
      std::exit(2);
    }
  }
  return o;
}

constexpr int kKillGraceMs = 300;

void WriteSetup(const std::string& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir + "/profiles");
  fs::create_directories(dir + "/pids");
  fs::create_directories(dir + "/work");
  std::ofstream(dir + "/profiles/soak-fake.json") << R"({
  "name": "soak-fake", "family": "soakfam", "type": "cli",
  "command": [")" FAKE_WORKER_BIN R"("], "brief": "stdin", "parser": "text",
  "timeout_s": 2, "idle_timeout_s": 0, "max_concurrent": 4
})";
  std::ofstream(dir + "/config.json")
      << R"({"kill_grace_ms": )" << kKillGraceMs << R"(, "eof_grace_ms": 300,
  "retry": {"base_ms": 50, "max_ms": 200, "max_attempts": 2}})";
}

double Median(std::vector<double> v) { return bench::Percentile(std::move(v), 50); }

// What SQLite holds in the daemon (its page caches fill up to their configured size as the
// database grows: bounded, not a leak), in MiB; -1 when the daemon did not answer.
double SqliteMiB(soak::v1::Conclave::Stub& stub) {
  auto ctx = bench::Ctx(std::chrono::seconds(10));
  soak::v1::StatusReply st;
  if (!stub.GetStatus(ctx.get(), soak::v1::GetStatusRequest(), &st).ok()) return -1;
  auto it = st.counts().find("sqlite_memory_bytes");
  return it == st.counts().end() ? -1 : it->second / 1048576.0;
}

// The daemon's memory over a window of load: medians of samples every 250 ms, so one moment
// (a burst of 16 clients' buffers, the heap returning pages late) does not decide it.
struct Memory {
  double rss = -1, sqlite = -1, own = -1;  // MiB; own = RSS less SQLite's
};
Memory SampleMemory(pid_t pid, soak::v1::Conclave::Stub& stub, std::chrono::milliseconds window) {
  std::vector<double> rss, sqlite, own;
  const auto end = std::chrono::steady_clock::now() + window;
  do {
    bench::IdleFor(std::chrono::milliseconds(250));
    const double r = bench::ProcessRssMiB(pid), q = SqliteMiB(stub);
    if (q < 0) continue;
    rss.push_back(r);
    sqlite.push_back(q);
    own.push_back(r - q);
  } while (std::chrono::steady_clock::now() < end);
  if (own.empty()) return {};
  return {Median(rss), Median(sqlite), Median(own)};
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  const std::string dir = bench::MakeTempDir("soak");
  const std::string socket = dir + "/d.sock";
  WriteSetup(dir);
  std::printf("soak: seed %llu, %s, state in %s\n", static_cast<unsigned long long>(o.seed),
              o.mixed_s > 0 ? ("mixed load for " + std::to_string(o.mixed_s) + " s").c_str()
                            : (std::to_string(o.kills) + " SIGKILLs").c_str(),
              dir.c_str());
  std::fflush(stdout);

  soak::DaemonGate gate;
  soak::Ledger ledger;
  soak::StoreCheck store(dir + "/st/conclave.db");
  std::vector<std::string> problems;
  bench::Child daemon;
  std::vector<double> restart_ms;
  auto start = [&]() -> bool {
    auto t0 = Clock::now();
    daemon = bench::Child({o.daemon, "--config", dir + "/config.json", "--state-dir", dir + "/st",
                           "--listen", "unix:" + socket, "--profiles", dir + "/profiles",
                           "--log-level", "warn"},
                          dir + "/daemon.log");
    pid_t served = -1;
    if (!bench::WaitUntilServing(socket, 120s, &served)) {
      problems.push_back("conclaved did not answer after a restart (see " + dir + "/daemon.log)");
      return false;
    }
    // A --daemon wrapper that does not exec: the kills and figures go to what answers.
    switch (daemon.AdoptServed(served, socket)) {
      case bench::Child::Served::kSame:
        break;
      case bench::Child::Served::kAdopted:
        std::fprintf(stderr, "soak: conclaved pid %d serves %s (started through pid %d)\n",
                     daemon.pid(), socket.c_str(), daemon.spawned_pid());
        break;
      case bench::Child::Served::kPrevious:
        problems.push_back("pid " + std::to_string(served) + " answering on " + socket +
                           " is a previous conclaved: a kill or stop missed it");
        return false;
      case bench::Child::Served::kNotOurs:
        std::fprintf(stderr, "soak: pid %d (from GetStatus) is not a conclaved on %s here; "
                             "measuring pid %d\n", served, socket.c_str(), daemon.spawned_pid());
        break;
    }
    restart_ms.push_back(bench::Micros(Clock::now() - t0) / 1000);
    gate.Up();
    return true;
  };

  const auto t_begin = Clock::now();
  if (!start()) {
    std::fprintf(stderr, "soak: %s\n", problems.back().c_str());
    return 1;
  }
  soak::LoadConfig cfg;
  cfg.socket = socket;
  cfg.pid_dir = dir + "/pids";
  cfg.clients = o.clients;
  cfg.seed = o.seed;
  cfg.pace_ms = o.pace_ms;
  soak::Load load(cfg, gate, ledger);
  if (!load.Prepare()) return 1;
  load.Start();
  // A fresh start's memory: the first daemon's over final_s seconds of the load; the run's is
  // the last daemon's over as long (the same warm-up: gRPC threads, SQLite's cache).
  auto status_stub = soak::v1::Conclave::NewStub(soak::SoakChannel(socket, 2000));
  const Memory fresh = SampleMemory(daemon.pid(), *status_stub, std::chrono::seconds(o.final_s));
  const double fresh_rss = fresh.rss, fresh_sqlite = fresh.sqlite;

  std::mt19937_64 rng(o.seed);
  int kills = 0, survivors = 0;
  std::vector<double> rss_samples, fd_samples, own_samples;
  if (o.mixed_s > 0) {
    for (int s = 0; s < o.mixed_s; ++s) {
      bench::IdleFor(1000ms);
      const double rss = bench::ProcessRssMiB(daemon.pid());
      rss_samples.push_back(rss);
      fd_samples.push_back(soak::FdCount(daemon.pid()));
      // The daemon's own memory: RSS less what SQLite holds (its page caches fill up to their
      // configured size as the database grows: bounded, not a leak).
      if (double sq = SqliteMiB(*status_stub); sq >= 0) own_samples.push_back(rss - sq);
    }
  } else {
    for (; kills < o.kills && problems.empty(); ++kills) {
      bench::IdleFor(std::chrono::milliseconds(200 + rng() % 1800));  // a random moment
      gate.Down();
      daemon = bench::Child();  // SIGKILL and reap
      store.Run(ledger, false, problems);
      auto before = soak::ReadPidFiles(cfg.pid_dir);
      if (!start()) break;
      for (const auto& w : soak::Survivors(before, std::chrono::milliseconds(kKillGraceMs) + 10s)) {
        ++survivors;
        problems.push_back("pid " + std::to_string(w.pid) + " (" + w.file +
                           ") of a killed daemon survived the next one's recovery");
      }
      if ((kills + 1) % 50 == 0) {
        std::printf("soak: %d kills, %lld ops, %zu messages, %zu tasks\n", kills + 1,
                    static_cast<long long>(ledger.ops.load()), store.messages_seen(),
                    ledger.dispatched.size());
        std::fflush(stdout);
      }
    }
  }
  const Memory after = SampleMemory(daemon.pid(), *status_stub,
                                    problems.empty() && o.mixed_s == 0
                                        ? std::chrono::milliseconds(o.final_s * 1000)
                                        : std::chrono::milliseconds(0));
  const double after_rss = after.rss, after_sqlite = after.sqlite;

  // Drain: no new work; every dispatched task must end.
  load.Quiesce();
  if (problems.empty() && !load.WaitAllEnded(300s)) {
    problems.push_back(std::to_string(ledger.outstanding()) +
                       " dispatched tasks did not end within 300 s");
  }
  const int after_fds = soak::FdCount(daemon.pid());
  gate.Stop();
  load.Join();
  const int stop_status = daemon.Stop();
  if (!WIFEXITED(stop_status) || WEXITSTATUS(stop_status) != 0) {
    problems.push_back("conclaved did not exit 0 on SIGTERM (status " +
                       std::to_string(stop_status) + ")");
  }
  auto all_pids = soak::ReadPidFiles(cfg.pid_dir);
  auto left = soak::Survivors(all_pids, std::chrono::milliseconds(kKillGraceMs) + 10s);
  for (const auto& w : left) {
    problems.push_back("pid " + std::to_string(w.pid) + " (" + w.file + ") left at the end");
  }
  store.Run(ledger, problems.empty(), problems);

  // Figures.
  const double wall = bench::SecondsSince(t_begin);
  int64_t errors = 0;
  for (const auto& [k, n] : ledger.errors) errors += n;
  std::printf("soak: %.0f s, %d SIGKILLs, %lld RPCs by %d clients (%lld failed%s)\n", wall, kills,
              static_cast<long long>(ledger.ops.load()), o.clients,
              static_cast<long long>(errors),
              o.mixed_s > 0 ? "" : ", while the daemon was down or being killed");
  std::printf("soak: %zu messages acknowledged, each stored once with its seq: %s\n",
              ledger.acked.size(), problems.empty() ? "yes" : "see below");
  std::string ends;
  for (const auto& [k, n] : store.end_states()) ends += " " + k + "=" + std::to_string(n);
  std::printf("soak: %zu tasks dispatched, %zu ended once (%s )\n", ledger.dispatched.size(),
              ledger.ended.size(), ends.c_str());
  std::printf("soak: %zu worker processes recorded; survivors of a recovery %d, left at the end "
              "%zu\n", all_pids.size(), survivors, left.size());
  std::printf("soak: restart -> serving p50 %.0f ms, p99 %.0f ms, max %.0f ms (%zu starts)\n",
              Median(restart_ms), bench::Percentile(restart_ms, 99),
              *std::max_element(restart_ms.begin(), restart_ms.end()), restart_ms.size());
  std::printf("soak: PRAGMA integrity_check ok after every kill and at the end: %s\n",
              std::none_of(problems.begin(), problems.end(),
                           [](const std::string& p) { return p.rfind("integrity", 0) == 0; })
                  ? "yes" : "no");
  std::printf("soak: daemon RSS fresh %.1f MiB, after the run %.1f MiB (%+.1f%%), fds %d\n",
              fresh_rss, after_rss, 100.0 * (after_rss - fresh_rss) / fresh_rss, after_fds);
  const double fresh_own = fresh.own, after_own = after.own;  // medians of RSS less SQLite's
  std::printf("soak: less SQLite's memory (%.1f -> %.1f MiB): fresh %.1f MiB, after the run "
              "%.1f MiB (%+.1f%%)\n", fresh_sqlite, after_sqlite, fresh_own, after_own,
              100.0 * (after_own - fresh_own) / fresh_own);
  if (o.mixed_s > 0 && rss_samples.size() >= 3) {
    const size_t w = std::max<size_t>(1, std::min<size_t>(60, rss_samples.size() / 3));
    std::vector<double> r0(rss_samples.begin(), rss_samples.begin() + w),
        r1(rss_samples.end() - w, rss_samples.end()), f0(fd_samples.begin(), fd_samples.begin() + w),
        f1(fd_samples.end() - w, fd_samples.end());
    const double rss_growth = 100.0 * (Median(r1) - Median(r0)) / Median(r0);
    std::vector<double> o0(own_samples.begin(), own_samples.begin() + std::min(w, own_samples.size())),
        o1(own_samples.end() - std::min(w, own_samples.size()), own_samples.end());
    const double own_growth = 100.0 * (Median(o1) - Median(o0)) / Median(o0);
    std::printf("soak: RSS first %zu s median %.1f MiB, last %zu s %.1f MiB (%+.1f%%); less "
                "SQLite's memory %.1f -> %.1f MiB (%+.1f%%); fds median %.0f -> %.0f, max %.0f "
                "-> %.0f\n", w, Median(r0), w, Median(r1), rss_growth, Median(o0), Median(o1),
                own_growth, Median(f0), Median(f1), *std::max_element(f0.begin(), f0.end()),
                *std::max_element(f1.begin(), f1.end()));
    if (errors > 0) problems.push_back(std::to_string(errors) + " RPCs failed under mixed load");
    if (own_samples.size() != rss_samples.size()) problems.push_back("GetStatus failed");
    if (own_growth > 5) {
      problems.push_back("the daemon's own memory (RSS less SQLite's) is not flat");
    }
    if (Median(f1) > Median(f0) + 4) problems.push_back("file descriptors grew under mixed load");
  } else if (fresh_sqlite < 0 || after_sqlite < 0) {
    problems.push_back("GetStatus did not answer for the RSS figures");
  } else if (after_own > fresh_own * 1.25) {
    // Two processes, each measured warm: their own memory differed by up to 16% run to run
    // (29.4-34.2 MiB) with nothing wrong. What this is for grows with what the kills left
    // behind: the run's ~57k messages held in memory after recovery would be +50%.
    problems.push_back("the daemon's own memory (RSS less SQLite's) after the run is more than "
                       "25% above a fresh start's");
  }
  for (const auto& [k, n] : ledger.errors) {
    std::printf("soak:   %lld x %s\n", static_cast<long long>(n), k.c_str());
  }
  for (const auto& p : problems) std::printf("soak: PROBLEM %s\n", p.c_str());
  std::printf("soak: %s\n", problems.empty() ? "PASS" : "FAIL");
  if (problems.empty() && !o.keep) {
    std::filesystem::remove_all(dir);
  } else {
    std::printf("soak: kept %s\n", dir.c_str());
  }
  return problems.empty() ? 0 : 1;
}
