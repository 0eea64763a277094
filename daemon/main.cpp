// conclaved: reads the config, wires the layers, runs the loop. Nothing else lives here.
#include <fcntl.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <spdlog/spdlog.h>
#include <thread>

#include "api/conclave_service.h"
#include "api/dispatch_socket_listener.h"
#include "api/grpc_server.h"
#include "api/queue_loop.h"
#include "common/clock.h"
#include "common/heap.h"
#include "common/loop_kick.h"
#include "common/runtime.h"
#include "common/thread_name.h"
#include "conclave_build_info.h"
#include "config/config.h"
#include "exec/child_process.h"
#include "exec/child_registry.h"
#include "exec/command_runner.h"
#include "exec/daemon_secrets.h"
#include "exec/redacting_log_sink.h"
#include "exec/launch_plan.h"
#include "exec/launcher.h"
#include "service/services.h"
#include "store/migrations.h"
#include "store/sqlite_memory.h"

namespace {

// Holds an exclusive flock on STATE_DIR/conclaved.lock for the life of the process.
int LockStateDir(const std::string& dir, std::string* error) {
  std::string path = dir + "/conclaved.lock";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return -1;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {0};
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "?";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    *error = "another conclaved (pid " + pid + ") is already running on state dir " + dir +
             "; stop it first or use another --state-dir";
    close(fd);
    return -1;
  }
  std::string me = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) == 0) pwrite(fd, me.data(), me.size(), 0);
  return fd;
}

// Parses the flags; returns an exit code when the process should end (help, version, error).
std::optional<int> ParseFlags(int argc, char** argv, conclave::config::Flags& flags) {
  CLI::App app{
      "conclaved: the Conclave orchestration daemon - a durable queue of tasks, named "
      "worker terminals running model CLIs as supervised child processes, and "
      "cross-family reviews, behind a gRPC API on a unix socket (see conclave(1))."};
  app.add_option("--config", flags.config_file, "JSON config file");
  app.add_option("--state-dir", flags.state_dir, "state directory (database, transcripts)");
  app.add_option("--listen", flags.listen, "unix:/path.sock or tcp:127.0.0.1:PORT");
  app.add_option("--log-level", flags.log_level, "trace|debug|info|warn|error");
  app.add_option("--profiles", flags.profiles_dir, "directory of profile *.json files");
  app.set_version_flag("--version", std::string("conclaved ") + CONCLAVE_VERSION + " (commit " +
                                        CONCLAVE_GIT_COMMIT + ")");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return std::nullopt;
}

// Creates the state directory (0700) and takes its lock; -1 with the reason in *error.
int PrepareStateDir(const conclave::config::Config& c, std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(c.state_dir, ec);
  if (ec) {
    *error = "cannot create state dir " + c.state_dir + ": " + ec.message();
    return -1;
  }
  chmod(c.state_dir.c_str(), 0700);
  return LockStateDir(c.state_dir, error);
}

// Opens the database and brings its schema up to date.
conclave::StatusOr<std::unique_ptr<conclave::store::Database>> OpenStore(
    const conclave::config::Config& c, int* schema) {
  using namespace conclave;
  std::unique_ptr<store::Database> db;
  try {
    store::Database::Options opts;
    opts.synchronous_full = c.synchronous_full;
    db = std::make_unique<store::Database>(c.database_path, opts);
  } catch (const store::StoreError& e) {
    if (store::IsLocked(e)) {
      return Status(Code::kUnavailable,
                    c.database_path + " is open in another process (" + e.what() +
                        "): conclaved keeps its database to itself while it runs; close that "
                        "process (a sqlite3 shell, another tool) and start conclaved again");
    }
    return Status(Code::kUnavailable, e.what());
  }
  if (!store::SqliteAllocatorInstalled()) {
    spdlog::warn("SQLite was initialized before the store opened: it keeps its own allocator, "
                 "with a global mutex on every malloc");
  }
  auto applied = store::ApplyMigrations(*db, store::EmbeddedMigrations());
  if (!applied.ok()) return applied.status();
  *schema = applied.value();
  return db;
}

// Pings systemd's watchdog from the loop, so a wedged loop stops the pings.
class Watchdog {
 public:
  explicit Watchdog(boost::asio::io_context& io) : timer_(io) {
    if (sd_watchdog_enabled(0, &usec_) > 0 && usec_ > 0) Ping();
  }
  void Cancel() { timer_.cancel(); }

 private:
  void Ping() {
    sd_notify(0, "WATCHDOG=1");
    timer_.expires_after(std::chrono::microseconds(usec_ / 2));
    timer_.async_wait([this](const boost::system::error_code& e) {
      if (!e) Ping();
    });
  }
  boost::asio::steady_timer timer_;
  uint64_t usec_ = 0;
};

// How long the loop waits in gRPC's queue at most (api/queue_loop.h): 1 s, or
// CONCLAVE_LOOP_IDLE_CAP_MS (0: no cap; the tests' DaemonFixture sets it, so that a missed wake
// fails the test that needed it instead of slowing it by a second).
std::chrono::milliseconds LoopIdleCap() {
  const char* v = std::getenv("CONCLAVE_LOOP_IDLE_CAP_MS");
  if (!v || !*v) return std::chrono::milliseconds(1000);
  char* end = nullptr;
  errno = 0;
  const long ms = std::strtol(v, &end, 10);
  if (errno != 0 || *end != '\0' || ms < 0) {
    spdlog::warn("CONCLAVE_LOOP_IDLE_CAP_MS: '{}' is not a count of milliseconds; 1000 it is", v);
    return std::chrono::milliseconds(1000);
  }
  return std::chrono::milliseconds(ms);
}

int Fail(const std::string& why, int code = 1) {
  std::cerr << "conclaved: " << why << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace conclave;
  ProductionRuntime();  // before gRPC or anything else starts a thread
  BeginBackgroundThreads();  // every thread started before the loop runs is SCHED_BATCH
  exec::BlockChildSignal();  // and blocks SIGCHLD: the loop reads it (exec/child_registry)
  config::Flags flags;
  if (auto exit_code = ParseFlags(argc, argv, flags)) return *exit_code;
  auto log_sink = std::make_shared<exec::RedactingLogSink>(nullptr);
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("conclaved", log_sink));
  auto cfg = config::LoadConfig(flags);
  if (!cfg.ok()) return Fail(cfg.status().message(), 2);
  const config::Config& c = cfg.value();
  spdlog::set_level(spdlog::level::from_str(c.log_level));
  exec::SetChildNice(c.child_nice);  // before anything is spawned
  std::string lock_error;
  int lock_fd = PrepareStateDir(c, &lock_error);
  if (lock_fd < 0) return Fail(lock_error);
  signal(SIGPIPE, SIG_IGN);
  int schema = 0;
  auto db = OpenStore(c, &schema);
  if (!db.ok()) return Fail(db.status().message());

  boost::asio::io_context io;
  // The loop polls gRPC's queue itself unless told not to, or unless Asio's reactor cannot be
  // watched (api/queue_loop.h): then the queue has a thread of its own.
  std::string no_queue_loop = "the config's api_queue_thread";
  std::optional<api::QueueLoop> queue_loop;
  if (!c.api_queue_thread) {
    const int reactor_fd = api::QueueLoop::FindReactorFd(io, &no_queue_loop);
    if (reactor_fd >= 0) {
      queue_loop.emplace(io, reactor_fd, LoopIdleCap(),
                         std::chrono::microseconds(c.loop_poll_us));
    }
    if (queue_loop && !queue_loop->ok()) {
      no_queue_loop = queue_loop->why();
      queue_loop.reset();
    }
    if (!queue_loop) spdlog::warn("the API's queue runs on a thread of its own: {}", no_queue_loop);
  }
  // Workers' orphans (double forks, setsid) stay the daemon's descendants, and are reaped.
  exec::OrphanReaper reaper(io);
  reaper.Start();
  SystemClock clock(io);
  exec::ProcessLauncher launcher(io);
  exec::ProcessCommandRunner commands;
  service::Core core(io, c, *db.value(), clock, launcher, commands);
  core.started_ms = clock.NowMs();
  core.listener = c.listen;
  core.daemon_env = exec::DaemonEnvironment();
  core.profiles = exec::LoadProfiles(c.profiles_dir);
  core.redactor = exec::Redactor(exec::DaemonSecrets(core.daemon_env, core.profiles));
  log_sink->SetRedactor(&core.redactor);
  spdlog::debug("redacting {} standing secret(s) from messages and the log",
                core.redactor.secrets().size());
  for (const auto& e : core.profiles.errors) {
    spdlog::warn("profile {}: {}{}", e.file, e.field.empty() ? "" : e.field + ": ", e.error);
  }
  core.bus.SeedLastSeq(core.messages.LastSeq());
  api::DispatchSocketListener dispatch_sockets(c.state_dir + "/sockets");
  core.dispatch_sockets = &dispatch_sockets;
  service::Services services(core);
  if (queue_loop) services.loop_polls = &queue_loop->poll_counts();
  services.Start();

  api::ConclaveService grpc_service(io, services);
  if (c.listen.rfind("tcp:", 0) == 0) grpc_service.RequireToken(c.tcp_token);
  auto server = api::StartServer(c.listen, grpc_service, queue_loop.has_value());
  if (!server.ok()) return Fail(server.status().message());
  // While no request comes, a retention pass deletes a backlog with only short pauses.
  services.retention.HearRequests([q = &server.value()->queue()] { return q->requests(); });
  // Migrations and recovery are done: health checks say SERVING until shutdown begins; while
  // the store refuses writes (disk full) NOT_SERVING, and SERVING again once it resumes.
  dispatch_sockets.Start(&server.value()->grpc(), grpc_service.peers());
  api::HealthStatus health(*server.value());
  core.batcher.OnModeChange([&health, &core](service::CommitBatcher::Mode mode) {
    using Mode = service::CommitBatcher::Mode;
    if (mode == Mode::kWriting) health.MarkServing();
    if (mode == Mode::kDiskFull) health.MarkNotServing("the store refuses writes: " + core.batcher.reason());
    if (mode == Mode::kBroken) health.MarkStopping();
  });
  health.MarkServing();
  spdlog::info(
      "conclaved {} ({}) serving on {} (state {}, schema {}, {} profiles, heap {}, API's queue {})",
      CONCLAVE_VERSION, CONCLAVE_GIT_COMMIT, c.listen, c.state_dir, schema,
      core.profiles.profiles.size(), HeapAllocator(),
      queue_loop ? "on the loop" : "on its own thread");
  sd_notify(0, "READY=1");
  Watchdog watchdog(io);

  std::thread shutdown_thread;
  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](const boost::system::error_code& e, int sig) {
    if (e) return;
    spdlog::info("signal {}: shutting down", sig);
    sd_notify(0, "STOPPING=1");
    health.MarkStopping();  // NOT_SERVING before Server::Shutdown begins
    grpc_service.SetStopping();
    watchdog.Cancel();
    services.Stop([&] {
      core.batcher.Flush();
      // Shutdown() waits for in-flight RPCs, which complete on this loop: call it elsewhere.
      shutdown_thread = std::thread([&] {
        dispatch_sockets.Stop();
        server.value()->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
        PostToLoop(io, [&] {
          core.batcher.Flush();
          io.stop();
        });
      });
      NameThread(shutdown_thread, "shutdown");
    });
  });
  EndBackgroundThreads();  // the loop itself runs SCHED_OTHER (as do the launcher's thread and workers)
  if (queue_loop) {
    // Workers and commands have the CPU the loop's poll would burn.
    queue_loop->SetPollGate([&services] {
      return services.runs.running() == 0 && services.runs.launching() == 0 &&
             exec::ChildRegistry::Instance().tracked() == 0;
    });
    queue_loop->Run(server.value()->queue());
    spdlog::info("the loop waited {} times in gRPC's queue; {} ended by its idle cap ({} handlers "
                 "were waiting after them); {} idle spells began with a poll of the queue, {} of "
                 "them ended by work while polling",
                 queue_loop->waits(), queue_loop->capped_waits(), queue_loop->late_handlers(),
                 queue_loop->polls(), queue_loop->caught());
  } else {
    api::RunAsio(io);
  }
  if (shutdown_thread.joinable()) shutdown_thread.join();
  server.value()->Wait();
  core.batcher.OnModeChange(nullptr);
  core.batcher.Flush();
  spdlog::info("conclaved stopped");
  core.helpers.join();
  log_sink->SetRedactor(nullptr);  // the redactor goes away with core
  close(lock_fd);
  return 0;
}
