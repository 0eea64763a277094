// TerminalStore: persistent worker slots. state: idle | busy | offline | draining | closed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/terminal.h"
#include "store/database.h"
#include "store/row_cache.h"

namespace conclave::store {

using TerminalRecord = domain::Terminal;

class TerminalStore {
 public:
  explicit TerminalStore(Database& db) : db_(db), cache_(db) {}

  std::optional<TerminalRecord> Get(const std::string& handle);
  void Insert(const TerminalRecord& t);
  // Writes the terminal's state and active dispatch (move it with domain::MoveTerminal first).
  void Save(const TerminalRecord& t);
  std::vector<TerminalRecord> List(bool include_closed);
  // The dispatches running in the open terminals whose cwd is cwd, when one of those terminals
  // is --exclusive; empty otherwise (a shared directory without --exclusive).
  std::vector<int64_t> RunningInExclusiveDir(const std::string& cwd);
  int64_t CountOpen();

 private:
  Database& db_;
  RowCache<std::string, TerminalRecord> cache_;  // Get's rows, kept exact by the writes
};

}  // namespace conclave::store
