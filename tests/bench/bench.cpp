// bench: Conclave's own cost, each figure next to its bare baseline measured in the same run
// (a bare gRPC ping server of the same build and API style on a unix socket; posix_spawn +
// waitpid), over repetitions (min / median / max). It starts its own ping server and conclaved
// on temporary directories, prints a Markdown table on stdout (progress on stderr), and
// asserts nothing. The unary, send and wake sections also measure a bare loop server
// (bench_loop_server.cpp): the daemon's structure — calls posted to one asio loop and finished
// from it — with no store; the send and wake sections the same with the daemon's store behind
// its Send.
//   bench [--daemon PATH] [--reps N] [--only a,b] [--messages N] [--idle-s S]
//   bench --check-baselines   (bench_check.cpp: the baseline servers are what the bench
//                             takes them for; exit 1 if not)
// Sections: unary, send, wake, sql, park, dispatch, load, reads (default: all of these); api
// (bench_api_style.cpp: a ping server of gRPC's callback API, bare loop servers) and oneloop
// (bench_one_loop.cpp: the bare loop servers on one thread against two) only when named.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "bench_sections.h"
#include "common/runtime.h"

#ifndef CONCLAVED_BIN
#define CONCLAVED_BIN "conclaved"
#endif

namespace {

const std::vector<std::pair<std::string, void (*)(bench::Env&)>> kSections = {
    {"unary", bench::RunUnary}, {"api", bench::RunApiStyle}, {"send", bench::RunSend},
    {"wake", bench::RunWake},   {"oneloop", bench::RunOneLoop}, {"sql", bench::RunSql},
    {"park", bench::RunPark},   {"dispatch", bench::RunDispatch}, {"load", bench::RunLoad},
    {"reads", bench::RunReads},
};
// Sections that run only when named in --only (not part of the default run's table).
const std::set<std::string> kOptIn = {"api", "oneloop"};
// The sections that time the bare loop servers; they come first, and the servers are stopped
// before any other runs.
const std::set<std::string> kWithLoopServers = {"unary", "api", "send", "wake",
                                                 "oneloop"};

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--daemon PATH] [--reps N] [--only SECTION,...] [--messages N] "
               "[--idle-s S]\nsections: unary send wake sql park dispatch load reads (by "
               "default), api oneloop (only when named)\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // The daemon's runtime settings for the ping server (a side of every RPC ratio) and for
  // the bench's clients of both.
  conclave::ProductionRuntime();
  if (argc == 3 && std::string(argv[1]) == "--serve-ping") return bench::ServePing(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "--serve-loop") return bench::ServeLoop(argv[2]);
  if (argc == 4 && std::string(argv[1]) == "--serve-loop-store") {
    return bench::ServeLoopStore(argv[2], argv[3]);
  }
  if (argc == 4 && std::string(argv[1]) == "--serve-one-loop-store") {
    return bench::ServeLoopStore(argv[2], argv[3], true);
  }
  if (argc == 2 && std::string(argv[1]) == "--check-baselines") {
    return bench::CheckBaselines(std::filesystem::read_symlink("/proc/self/exe"), CONCLAVED_BIN);
  }
  if (argc == 3) {
    const std::string mode = argv[1];
    if (mode == "--serve-callback-ping") return bench::ServeCallbackPing(argv[2]);
    if (mode == "--serve-spin-ping") return bench::ServeSpinPing(argv[2]);
    if (mode == "--serve-polling-ping") return bench::ServePollingPing(argv[2]);
    if (mode == "--serve-async-loop-health") return bench::ServeLoop(argv[2], true);
    if (mode == "--serve-one-loop") return bench::ServeLoop(argv[2], false, true);
  }
  bench::Env env;
  env.daemon_bin = CONCLAVED_BIN;
  std::set<std::string> only;
  std::string command = "bench";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) std::exit(Usage(argv[0]));
      return argv[++i];
    };
    if (a == "--daemon") {
      env.daemon_bin = value();
      continue;  // a path: not part of the reproducible command
    } else if (a == "--reps") {
      env.reps = std::atoi(value().c_str());
    } else if (a == "--messages") {
      env.messages = std::atol(value().c_str());
    } else if (a == "--idle-s") {
      env.idle_s = std::atoi(value().c_str());
    } else if (a == "--only") {
      std::stringstream ss(value());
      for (std::string s; std::getline(ss, s, ',');) only.insert(s);
    } else {
      return Usage(argv[0]);
    }
    command += " " + a + " " + argv[i];
  }
  for (const auto& s : only) {
    bool known = false;
    for (const auto& [name, fn] : kSections) known |= name == s;
    if (!known) {
      std::fprintf(stderr, "bench: unknown section '%s'\n", s.c_str());
      return Usage(argv[0]);
    }
  }
  if (env.reps < 1 || env.messages < 1000 || env.idle_s < 1) return Usage(argv[0]);

  env.self = std::filesystem::read_symlink("/proc/self/exe");
  env.root = bench::MakeTempDir("bench");
  env.ping_socket = env.root + "/ping.sock";
  env.ping = bench::Child({env.self, "--serve-ping", env.ping_socket}, env.root + "/ping.log");
  if (!bench::WaitUntilServing(env.ping_socket, std::chrono::seconds(30))) {
    std::fprintf(stderr, "bench: the ping server did not start\n");
    return 1;
  }
  if (only.empty() || only.count("unary") || only.count("send") || only.count("wake") ||
      only.count("api") || only.count("oneloop")) {
    env.loop_socket = env.root + "/loop.sock";
    env.loop = bench::Child({env.self, "--serve-loop", env.loop_socket}, env.root + "/loop.log");
    if (!bench::WaitUntilServing(env.loop_socket, std::chrono::seconds(30))) {
      std::fprintf(stderr, "bench: the loop server did not start\n");
      return 1;
    }
  }
  if (only.empty() || only.count("send") || only.count("wake") || only.count("oneloop")) {
    // Its database is one conclaved created (schema, indexes, settings), then left.
    bench::Daemon maker;
    maker.StartNew(env.daemon_bin, env.root + "/loop-store");
    maker.Stop();
    env.loop_store_socket = env.root + "/loop-store.sock";
    env.loop_store = bench::Child(
        {env.self, "--serve-loop-store", env.loop_store_socket, maker.db_path()},
        env.root + "/loop-store.log");
    if (!bench::WaitUntilServing(env.loop_store_socket, std::chrono::seconds(30))) {
      std::fprintf(stderr, "bench: the loop server with the store did not start\n");
      return 1;
    }
  }
  env.daemon.StartNew(env.daemon_bin, env.root + "/main");

  // A shared VM's noise has a measurable part: the time this guest's vCPUs were ready to run
  // and the host ran something else (steal; a woken vCPU waiting for the host counts too).
  // Printed per section and for the whole run.
  const bench::HostTicks start = bench::ReadHostTicks();
  std::string steal_by_section;
  for (const auto& [name, fn] : kSections) {
    if (only.empty() ? kOptIn.count(name) > 0 : !only.count(name)) continue;
    if (!kWithLoopServers.count(name)) {
      // The sections from here on measure the daemon with nothing else running.
      if (env.loop.alive()) env.loop.Stop();
      if (env.loop_store.alive()) env.loop_store.Stop();
    }
    bench::HostTicks before = bench::ReadHostTicks();
    fn(env);
    char part[64];
    std::snprintf(part, sizeof part, "%s%s %.1f%%", steal_by_section.empty() ? "" : ", ",
                  name.c_str(), bench::StealPercent(before, bench::ReadHostTicks()));
    steal_by_section += part;
  }
  const double steal = bench::StealPercent(start, bench::ReadHostTicks());
  env.daemon.Stop();
  env.ping.Stop();
  if (env.loop.alive()) env.loop.Stop();
  if (env.loop_store.alive()) env.loop_store.Stop();

  std::printf("%s", env.table.Markdown().c_str());
  std::printf("\n`%s` — %d repetitions; %ld CPUs; conclaved: %s\n", command.c_str(), env.reps,
              sysconf(_SC_NPROCESSORS_ONLN), env.daemon_bin.c_str());
  std::printf("CPU time stolen by the hypervisor (/proc/stat): %.1f%% over the run (%s)\n", steal,
              steal_by_section.c_str());
  std::filesystem::remove_all(env.root);
  return 0;
}
