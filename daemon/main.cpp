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
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include "api/conclave_service.h"
#include "api/grpc_server.h"
#include "common/clock.h"
#include "conclave_build_info.h"
#include "config/config.h"
#include "service/services.h"
#include "store/migrations.h"

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

}  // namespace

int main(int argc, char** argv) {
  using namespace conclave;
  CLI::App app{
      "conclaved: the Conclave orchestration daemon - a durable queue of tasks, named "
      "worker terminals running model CLIs as supervised child processes, and "
      "cross-family reviews, behind a gRPC API on a unix socket (see conclave(1))."};
  config::Flags flags;
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

  auto logger = spdlog::stderr_color_mt("conclaved");
  spdlog::set_default_logger(logger);
  auto cfg = config::LoadConfig(flags);
  if (!cfg.ok()) {
    std::cerr << "conclaved: " << cfg.status().message() << "\n";
    return 2;
  }
  const config::Config& c = cfg.value();
  spdlog::set_level(spdlog::level::from_str(c.log_level));

  std::error_code ec;
  std::filesystem::create_directories(c.state_dir, ec);
  if (ec) {
    std::cerr << "conclaved: cannot create state dir " << c.state_dir << ": " << ec.message() << "\n";
    return 1;
  }
  chmod(c.state_dir.c_str(), 0700);
  std::string lock_error;
  int lock_fd = LockStateDir(c.state_dir, &lock_error);
  if (lock_fd < 0) {
    std::cerr << "conclaved: " << lock_error << "\n";
    return 1;
  }
  signal(SIGPIPE, SIG_IGN);

  std::unique_ptr<store::Database> db;
  try {
    store::Database::Options opts;
    opts.synchronous_full = c.synchronous_full;
    db = std::make_unique<store::Database>(c.database_path, opts);
  } catch (const store::StoreError& e) {
    std::cerr << "conclaved: " << e.what() << "\n";
    return 1;
  }
  auto schema = store::ApplyMigrations(*db, store::EmbeddedMigrations());
  if (!schema.ok()) {
    std::cerr << "conclaved: " << schema.status().message() << "\n";
    return 1;
  }

  boost::asio::io_context io;
  service::Core core(io, c, *db);
  core.started_ms = NowMs();
  core.listener = c.listen;
  core.profiles = exec::LoadProfiles(c.profiles_dir);
  for (const auto& e : core.profiles.errors) {
    spdlog::warn("profile {}: {}{}", e.file, e.field.empty() ? "" : e.field + ": ", e.error);
  }
  core.bus.SeedLastSeq(core.messages.LastSeq());
  service::Services services(core);
  services.messaging.EnsureBuiltinHandles();
  core.batcher.Flush();
  services.tasks.Recover();
  services.reviews.Resume();

  api::ConclaveService grpc_service(io, services);
  if (c.listen.rfind("tcp:", 0) == 0) grpc_service.RequireToken(c.tcp_token);
  auto server = api::StartServer(c.listen, grpc_service);
  if (!server.ok()) {
    std::cerr << "conclaved: " << server.status().message() << "\n";
    return 1;
  }
  // Migrations and recovery are done: health checks say SERVING until shutdown begins or the
  // store starts refusing writes.
  api::HealthStatus health(*server.value());
  core.batcher.set_health_reporter(&health);
  health.MarkServing();
  spdlog::info("conclaved {} ({}) serving on {} (state {}, schema {}, {} profiles)",
               CONCLAVE_VERSION, CONCLAVE_GIT_COMMIT, c.listen, c.state_dir, schema.value(),
               core.profiles.profiles.size());
  sd_notify(0, "READY=1");

  // Watchdog: pinged from the loop, so a wedged loop stops the pings.
  uint64_t watchdog_usec = 0;
  boost::asio::steady_timer watchdog(io);
  std::function<void()> ping = [&] {
    sd_notify(0, "WATCHDOG=1");
    watchdog.expires_after(std::chrono::microseconds(watchdog_usec / 2));
    watchdog.async_wait([&](const boost::system::error_code& e) {
      if (!e) ping();
    });
  };
  if (sd_watchdog_enabled(0, &watchdog_usec) > 0 && watchdog_usec > 0) ping();

  std::thread shutdown_thread;
  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](const boost::system::error_code& e, int sig) {
    if (e) return;
    spdlog::info("signal {}: shutting down", sig);
    sd_notify(0, "STOPPING=1");
    health.MarkStopping();  // NOT_SERVING before Server::Shutdown begins
    grpc_service.SetStopping();
    watchdog.cancel();
    core.bus.ExpireAll();
    services.reviews.ExpireWaiters();
    services.tasks.StopAll([&] {
      core.batcher.Flush();
      // Shutdown() waits for in-flight RPCs, which complete on this loop: call it elsewhere.
      shutdown_thread = std::thread([&] {
        server.value()->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
        boost::asio::post(io, [&] {
          core.batcher.Flush();
          io.stop();
        });
      });
    });
  });

  // A handler that throws must not take the daemon down with it: log and keep serving.
  for (;;) {
    try {
      io.run();
      break;
    } catch (const std::exception& e) {
      spdlog::critical("unhandled error on the loop (continuing): {}", e.what());
    }
  }
  if (shutdown_thread.joinable()) shutdown_thread.join();
  server.value()->Wait();
  core.batcher.set_health_reporter(nullptr);
  core.batcher.Flush();
  spdlog::info("conclaved stopped");
  close(lock_fd);
  return 0;
}
