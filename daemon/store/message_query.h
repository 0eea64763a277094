// MessageQuery: turns a MessageFilter into SQL that an index serves in seq order, so every
// Inbox / Check / Wait / Watch filter costs a few seeks plus the rows it returns — never a
// walk of the log. One filter dimension "drives" the query through a named index (INDEXED BY,
// so the plan cannot drift): task ids > recipient > sender > type or unread > seq alone.
// Every index column before seq must be fixed for the index to yield seq order, so the query
// runs once per combination of those values — each task id; each type asked for (or each of
// the closed list); read 0, or 0 and 1 — and MessageStore merges the runs by seq. Filter
// dimensions the driving index does not hold are checked on the rows it yields.
// Pure: builds text only; MessageStore runs it. Thread-safety: none needed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "domain/message.h"

namespace conclave::store {

// The columns every message query selects, in the order MessageStore reads them.
inline constexpr const char* kMessageColumns =
    "seq, created_ms, type, priority, sender, recipient, subject, body, payload, task_id, "
    "dispatch_id, thread_id, reply_to, read";

struct MessageQuery {
  // Parameters: ?1 after_seq, ?2 limit, ?3 recipient, ?4 sender, ?5 task id, ?6 type,
  // ?7 JSON array of types, ?8 read. A run binds one value of each split dimension.
  std::string rows_sql;  // selects kMessageColumns
  std::string seqs_sql;  // the same, selecting seq only (covering when nothing else is checked)
  std::vector<int64_t> tasks;      // ?5 per run; empty: not bound
  std::vector<std::string> types;  // ?6 per run; empty: not bound
  std::vector<int> reads;          // ?8 per run; empty: not bound
  bool bind_to = false, bind_from = false, bind_types_json = false;
  size_t Runs() const {
    return std::max<size_t>(tasks.size(), 1) * std::max<size_t>(types.size(), 1) *
           std::max<size_t>(reads.size(), 1);
  }
};

// The query for filter, oldest first (or newest first). all_types is the closed list of
// message types (every stored row has one of them).
MessageQuery PlanMessageQuery(const domain::MessageFilter& filter, bool newest_first,
                              const std::vector<std::string>& all_types);

// ["a","b"] with JSON string escaping.
std::string JsonStringArray(const std::vector<std::string>& values);

}  // namespace conclave::store
