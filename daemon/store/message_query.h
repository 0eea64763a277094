// MessageQuery: turns a MessageFilter into one SQL statement that indexes serve in seq order,
// so an Inbox / Check / Wait / Watch filter costs a few seeks plus the rows it returns, not a
// walk of the log — except where a filter dimension the driving index does not hold rejects
// most of what it yields (below). One filter dimension "drives" the query through a named
// index (INDEXED BY, so the plan cannot drift): task ids > recipient > sender > type or
// unread > seq alone — except that a filter on both the recipient and the sender may be
// driven by the sender (the caller measures which has fewer entries: PlanSideProbe). Every
// index column before seq must be fixed for the index to yield seq order, so the statement is
// a UNION ALL of one covering seek per combination of those values — each task id; each type
// asked for (or each of the closed list); read 0, or 0 and 1 — which SQLite merges lazily by
// seq and stops at the limit; the rows are then read by seq. Filter dimensions the driving
// index does not hold are checked on the rows it yields: a task's messages are walked for a
// recipient or sender, a recipient's for a sender when both sides are busy. Beyond
// kMaxTaskArms task ids or kMaxArms arms, a single seek per id feeds a sort instead (a walk
// of those tasks' messages).
// Builds text only; MessageStore runs it. Thread-safety: any thread (each keeps its own texts
// by shape, up to kMaxArms arms: a few hundred at most, whatever the values bound).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "domain/message.h"

namespace conclave::store {

// The columns every message query selects, in the order MessageStore reads them.
inline constexpr const char* kMessageColumns =
    "seq, created_ms, type, priority, sender, recipient, subject, body, payload, task_id, "
    "dispatch_id, thread_id, reply_to, read";

inline constexpr size_t kMaxTaskArms = 16;
// Task ids are read as one arm per (task, type, read) only while there are at most this many
// arms (3 tasks with any type, 16 with one type); more go through the sort.
inline constexpr size_t kMaxArms = 64;

struct MessageQuery {
  struct Bind {
    int index;
    int64_t number = 0;
    std::string text;
    bool is_text = false;
  };
  // Common parameters: ?1 after_seq, ?2 limit, ?3 recipient, ?4 sender, ?5 JSON array of
  // types, ?6 JSON array of task ids — the flags say which the SQL uses. Arm values follow.
  std::string sql;
  bool bind_to = false, bind_from = false, bind_types_json = false, bind_tasks_json = false;
  std::vector<Bind> binds;  // values fixed per arm (and single values)
};

// The query for filter, oldest first (or newest first). all_types is the closed list of
// message types (every stored row has one of them). by_sender: a filter with a recipient and
// a sender (and no task ids) is driven by the sender's index instead of the recipient's.
MessageQuery PlanMessageQuery(const domain::MessageFilter& filter, bool newest_first,
                              const std::vector<std::string>& all_types, bool by_sender = false);

// A row per index entry after ?1 (at most ?2 rows) of the filter's recipient (or, with
// sender, its sender) among the types and read states the filter allows: one covering seek
// per (type, read) arm and at most ?2 entries, whatever the log's size; the caller counts the
// rows. Binds as in MessageQuery (?3 recipient or ?4 sender, arm values from ?10).
MessageQuery PlanSideProbe(const domain::MessageFilter& filter, bool sender,
                           const std::vector<std::string>& all_types);

// ["a","b"] with JSON string escaping.
std::string JsonStringArray(const std::vector<std::string>& values);
// [1,2,3]
std::string JsonNumberArray(const std::vector<int64_t>& values);

}  // namespace conclave::store
