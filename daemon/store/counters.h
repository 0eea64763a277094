// Counters: row counts kept by triggers (migration 0007) in the same transaction as the rows
// they count, so status reads one row instead of counting a table. Names: messages_gone and
// messages_read (0014: the message counts come from the sequence less these, see
// MessageStore::Count), handles_open, terminals_open, tasks_<status>, dispatches_<state>.
// Loop thread only (through the loop's Database). Throws StoreError.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "store/database.h"

namespace conclave::store {

// The counter's value (0 when it was never set).
int64_t ReadCounter(Database& db, std::string_view name);

// Every non-zero counter whose name starts with prefix, keyed by the rest of the name.
std::map<std::string, int64_t> ReadCounters(Database& db, const std::string& prefix);

}  // namespace conclave::store
