// TerminalStore: persistent worker slots. state: idle | busy | offline | draining | closed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/database.h"

namespace conclave::store {

struct TerminalRecord {
  std::string handle;
  std::string profile;
  std::string cwd;
  std::string state = "idle";
  int64_t active_dispatch = 0;
  int64_t created_ms = 0;
};

class TerminalStore {
 public:
  explicit TerminalStore(Database& db) : db_(db) {}

  std::optional<TerminalRecord> Get(const std::string& handle);
  void Insert(const TerminalRecord& t);
  void SetState(const std::string& handle, const std::string& state, int64_t active_dispatch);
  std::vector<TerminalRecord> List(bool include_closed);
  int64_t CountOpen();

 private:
  Database& db_;
};

}  // namespace conclave::store
