// HandleStore: addressable names. A handle is never reissued: closing marks it closed, and
// registering a closed name is refused by the service.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/gate.h"
#include "store/database.h"
#include "store/row_cache.h"

namespace conclave::store {

using HandleRecord = domain::Handle;

class HandleStore {
 public:
  explicit HandleStore(Database& db) : db_(db), cache_(db) {}

  std::optional<HandleRecord> Get(const std::string& name);
  void Insert(const HandleRecord& h);
  void MarkClosed(const std::string& name);
  std::vector<HandleRecord> List(bool include_closed);
  int64_t Count();

 private:
  Database& db_;
  RowCache<std::string, HandleRecord> cache_;  // Get's rows, kept exact by the writes
};

}  // namespace conclave::store
