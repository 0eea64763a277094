// A real SQLite file in a fresh temporary directory, removed afterwards (store unit tests);
// optionally migrated to the embedded schema; and a bounded poll for a condition another
// thread makes true (no sleeps).
#pragma once

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include "domain/message.h"
#include "store/database.h"
#include "store/migrations.h"

namespace conclave::testing {

// A fresh temporary directory, removed with everything in it when this goes out of scope
// (also when a REQUIRE fails).
struct TempDir {
  std::string dir;
  TempDir() {
    char t[] = "/tmp/cvuXXXXXX";  // mkdtemp's template
    dir = mkdtemp(t);
  }
  ~TempDir() { std::filesystem::remove_all(dir); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

struct TempDb {
  TempDir tmp;
  std::string dir = tmp.dir;
  std::unique_ptr<store::Database> db;
  explicit TempDb(bool migrate = false, store::Database::Options opts = {}) {
    db = std::make_unique<store::Database>(path(), opts);
    if (migrate && !store::ApplyMigrations(*db, store::EmbeddedMigrations()).ok()) {
      throw std::runtime_error("migrations failed");
    }
  }
  ~TempDb() { db.reset(); }  // closed before the directory goes
  std::string path() const { return dir + "/t.db"; }
};

inline domain::MessageRecord Msg(const std::string& to, const std::string& type, int64_t task = 0) {
  domain::MessageRecord m;
  m.created_ms = 1;
  m.type = type;
  m.from = "coordinator";
  m.to = to;
  m.subject = "s";
  m.thread_id = "t";
  m.task_id = task;
  return m;
}

// Counts the statements whose SQL contains needle (the fault hook sees every Prepare).
struct StatementCounter {
  store::Database& db;
  int seen = 0;
  StatementCounter(store::Database& d, std::string needle) : db(d) {
    db.SetFaultHookForTest([this, needle](std::string_view sql) {
      if (sql.find(needle) != std::string_view::npos) ++seen;
      return 0;
    });
  }
  ~StatementCounter() { db.SetFaultHookForTest(nullptr); }
  StatementCounter(const StatementCounter&) = delete;
  StatementCounter& operator=(const StatementCounter&) = delete;
};

// Yields until cond() or timeout; returns the last value.
inline bool PollUntil(const std::function<bool()>& cond, std::chrono::milliseconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > until) return cond();
    std::this_thread::yield();
  }
  return true;
}

}  // namespace conclave::testing
