// Store test support: a database on a temporary directory (removed afterwards), optionally
// with the embedded migrations applied, and a bounded poll for conditions another thread
// makes true (no sleeps). Header-only, for tests under unit/store/.
#pragma once

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "store/database.h"
#include "store/migrations.h"

namespace conclave::testing {

struct TempDb {
  std::string dir;
  std::unique_ptr<store::Database> db;
  explicit TempDb(bool migrate = true, store::Database::Options opts = {}) {
    char t[] = "/tmp/cvuXXXXXX";
    dir = mkdtemp(t);
    db = std::make_unique<store::Database>(path(), opts);
    if (migrate && !store::ApplyMigrations(*db, store::EmbeddedMigrations()).ok()) {
      throw std::runtime_error("migrations failed");
    }
  }
  ~TempDb() {
    db.reset();
    std::filesystem::remove_all(dir);
  }
  std::string path() const { return dir + "/t.db"; }
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
