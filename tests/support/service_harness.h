// ServiceHarness: every service part over a real SQLite file in a temporary directory, with a
// fake clock, a fake launcher and scripted helper commands — the daemon's rules without a
// socket, processes or sleeps. The test drives time with clock.Advance() and lets the loop
// (and the helper pool) settle with Settle() / RunUntil().
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <string>

#include "fake_activity_probe.h"
#include "fake_clock.h"
#include "fake_command_runner.h"
#include "fake_launcher.h"
#include "service/services.h"
#include "store/database.h"

namespace conclave::testing {

class ServiceHarness {
 public:
  // configure may change the config before the services start.
  explicit ServiceHarness(std::function<void(config::Config&)> configure = nullptr);
  ~ServiceHarness();

  // Adds a profile (a "command" profile running `true` unless changed by edit).
  exec::Profile& AddProfile(const std::string& name, const std::string& family,
                            int max_concurrent = 1);
  // Creates a terminal (on the loop, committed).
  void AddTerminal(const std::string& handle, const std::string& profile);
  // Creates a task and returns its id.
  int64_t AddTask(const std::string& brief, std::function<void(domain::Task&)> edit = nullptr);
  // Dispatches; returns the status of the call.
  Status Dispatch(int64_t task_id, const std::string& to);

  // Runs the loop until cond holds (helper-pool work included); false after `max_ms` of real
  // time without it (a bound against hangs, not a synchronisation sleep; generous, as a
  // loaded 2-core CI machine runs these beside the integration tests).
  bool RunUntil(const std::function<bool()>& cond, int max_ms = 20000);
  // Runs everything that is ready now.
  void Settle();

  domain::Task Task(int64_t id);
  std::vector<domain::Dispatch> Dispatches(int64_t task_id);
  std::vector<domain::MessageRecord> Messages(const std::string& type);

  std::string dir;
  boost::asio::io_context io;
  config::Config config;
  FakeClock clock;
  FakeLauncher launcher;
  FakeCommandRunner commands;
  std::shared_ptr<FakeActivityProbe> activity = std::make_shared<FakeActivityProbe>();
  std::unique_ptr<store::Database> db;
  std::unique_ptr<service::Core> core;
  std::unique_ptr<service::Services> services;
};

}  // namespace conclave::testing
