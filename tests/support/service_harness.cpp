#include "service_harness.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "store/migrations.h"

namespace conclave::testing {

ServiceHarness::ServiceHarness(std::function<void(config::Config&)> configure) {
  char t[] = "/tmp/cvhXXXXXX";
  dir = mkdtemp(t);
  config.state_dir = dir + "/state";
  config.database_path = config.state_dir + "/conclave.db";
  config.profiles_dir = dir + "/profiles";
  config.retry.base_ms = 1000;
  config.retry.max_ms = 60000;
  config.review.workdir = dir + "/reviews";  // outside the state directory, as LoadConfig makes it
  std::filesystem::create_directories(config.state_dir);
  std::filesystem::create_directories(config.profiles_dir);
  if (configure) configure(config);
  db = std::make_unique<store::Database>(config.database_path, store::Database::Options{});
  auto applied = store::ApplyMigrations(*db, store::EmbeddedMigrations());
  if (!applied.ok()) throw std::runtime_error(applied.status().message());
  core = std::make_unique<service::Core>(io, config, *db, clock, launcher, commands);
  core->activity = activity;
  core->listener = "unix:" + dir + "/s.sock";
  services = std::make_unique<service::Services>(*core);
  services->Start();
  Settle();
}

ServiceHarness::~ServiceHarness() {
  services.reset();
  core.reset();
  db.reset();
  std::filesystem::remove_all(dir);
}

exec::Profile& ServiceHarness::AddProfile(const std::string& name, const std::string& family,
                                          int max_concurrent) {
  exec::Profile p;
  p.name = name;
  p.family = family;
  p.type = "command";
  p.command = {"true"};
  p.max_concurrent = max_concurrent;
  p.timeout_s = 60;
  p.idle_timeout_s = 0;
  auto& list = core->profiles.profiles;
  list.push_back(p);
  return list.back();
}

void ServiceHarness::AddTerminal(const std::string& handle, const std::string& profile) {
  bool done = false;
  services->terminals.Create(profile, handle, dir, false, [&](StatusOr<service::TerminalView> v) {
    if (!v.ok()) throw std::runtime_error(v.status().message());
    done = true;
  });
  RunUntil([&] { return done; });
}

int64_t ServiceHarness::AddTask(const std::string& brief, std::function<void(domain::Task&)> edit) {
  service::CreateTaskInput in;
  in.task.brief = brief;
  if (edit) edit(in.task);
  int64_t id = 0;
  services->tasks.Create(in, [&](StatusOr<service::CreateTaskResult> r) {
    if (!r.ok()) throw std::runtime_error(r.status().message());
    id = r->task.task.id;
  });
  RunUntil([&] { return id != 0; });
  return id;
}

Status ServiceHarness::Dispatch(int64_t task_id, const std::string& to) {
  std::optional<Status> result;
  service::DispatchInput in;
  in.task_id = task_id;
  in.to = to;
  services->scheduler.Dispatch(in, [&](StatusOr<domain::Dispatch> d) { result = d.status(); });
  RunUntil([&] { return result.has_value(); });
  return result.value_or(Internal("no answer"));
}

bool ServiceHarness::RunUntil(const std::function<bool()>& cond, int max_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_ms);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    io.restart();
    io.run_for(std::chrono::milliseconds(5));
  }
  Settle();
  return true;
}

void ServiceHarness::Settle() {
  io.restart();
  io.poll();
}

domain::Task ServiceHarness::Task(int64_t id) { return *core->tasks.Get(id); }

std::vector<domain::Dispatch> ServiceHarness::Dispatches(int64_t task_id) {
  return core->dispatches.ForTask(task_id);
}

std::vector<domain::MessageRecord> ServiceHarness::Messages(const std::string& type) {
  domain::MessageFilter f;
  f.types = {type};
  return core->messages.After(f, 0, 10000);
}

}  // namespace conclave::testing
