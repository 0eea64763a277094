// A real SQLite file in a fresh temporary directory, removed afterwards (store unit tests).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "domain/message.h"
#include "store/database.h"

namespace conclave::testing {

struct TempDb {
  std::string dir;
  std::unique_ptr<store::Database> db;
  TempDb() {
    char t[] = "/tmp/cvuXXXXXX";
    dir = mkdtemp(t);
    db = std::make_unique<store::Database>(dir + "/t.db", store::Database::Options{});
  }
  ~TempDb() {
    db.reset();
    std::filesystem::remove_all(dir);
  }
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

}  // namespace conclave::testing
