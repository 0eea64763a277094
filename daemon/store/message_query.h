// MessageQuery: turns a MessageFilter into SQL that an index serves in seq order, so every
// Inbox / Check / Wait / Watch filter costs a seek plus the rows it returns — never a walk of
// the whole log. One filter dimension "drives" the query through a named index (INDEXED BY,
// so the plan cannot drift); a filter with several task ids or types runs the same statement
// once per value and the results are merged by seq. The other dimensions filter the rows the
// index yields. Choice, most selective first: task ids > recipient (with its type or unread
// index) > unread > sender > type > seq alone.
// Pure: builds text only; MessageStore runs it. Thread-safety: none needed.
#pragma once

#include <string>
#include <vector>

#include "domain/message.h"

namespace conclave::store {

// The columns every message query selects, in the order MessageStore reads them.
inline constexpr const char* kMessageColumns =
    "seq, created_ms, type, priority, sender, recipient, subject, body, payload, task_id, "
    "dispatch_id, thread_id, reply_to, read";

struct MessageQuery {
  enum class Split { kNone, kByTask, kByType };
  std::string sql;
  Split split = Split::kNone;
  // Parameters the SQL uses: ?1 after_seq and ?2 limit always; then these when set.
  bool bind_to = false;          // ?3 recipient
  bool bind_from = false;        // ?4 sender
  bool bind_task = false;        // ?5 one task id (the split value, or the only one)
  bool bind_type = false;        // ?6 one type (the split value, or the only one)
  bool bind_types_json = false;  // ?7 a JSON array of types
};

// The SQL for filter, oldest first (or newest first), limit rows per run.
MessageQuery PlanMessageQuery(const domain::MessageFilter& filter, bool newest_first);

// ["a","b"] with JSON string escaping.
std::string JsonStringArray(const std::vector<std::string>& values);

}  // namespace conclave::store
