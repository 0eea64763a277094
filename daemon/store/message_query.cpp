#include "store/message_query.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace conclave::store {
namespace {

template <typename T>
std::vector<T> Distinct(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// One value fixed per arm for an index column ("" = not fixed per arm).
struct Arm {
  int64_t task = 0;
  std::string type;
  int read = -1;
};

// One arm per (type, read) pair the filter allows.
std::vector<Arm> TypeReadArms(const domain::MessageFilter& f, const std::vector<Arm>& base,
                              const std::vector<std::string>& all_types) {
  std::vector<std::string> types = Distinct(f.types.empty() ? all_types : f.types);
  std::vector<int> reads = f.unread_only ? std::vector<int>{0} : std::vector<int>{0, 1};
  std::vector<Arm> crossed;
  for (const Arm& a : base) {
    for (const auto& t : types) {
      for (int r : reads) crossed.push_back(Arm{a.task, t, r});
    }
  }
  return crossed;
}

}  // namespace

std::string JsonStringArray(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        static const char* kHex = "0123456789abcdef";
        out += "\\u00";
        out += kHex[(c >> 4) & 15];
        out += kHex[c & 15];
      } else {
        out += c;
      }
    }
    out += '"';
  }
  return out + "]";
}

std::string JsonNumberArray(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(values[i]);
  }
  return out + "]";
}

MessageQuery PlanSideProbe(const domain::MessageFilter& f, bool sender,
                           const std::vector<std::string>& all_types) {
  MessageQuery q;
  std::string head = sender ? "SELECT 1 FROM messages INDEXED BY messages_from WHERE seq > ?1 "
                              "AND sender = ?4"
                            : "SELECT 1 FROM messages INDEXED BY messages_to WHERE seq > ?1 "
                              "AND recipient = ?3";
  (sender ? q.bind_from : q.bind_to) = true;
  std::string merged;
  int next = 10;
  for (const Arm& a : TypeReadArms(f, {Arm{}}, all_types)) {
    if (!merged.empty()) merged += " UNION ALL ";
    merged += head + " AND type = ?" + std::to_string(next);
    q.binds.push_back({next++, 0, a.type, true});
    merged += " AND read = ?" + std::to_string(next);
    q.binds.push_back({next++, a.read, "", false});
  }
  q.sql = merged + " LIMIT ?2";
  return q;
}

namespace {

// What a filter's SQL text depends on (its values are all bound): the text is built once per
// shape and thread.
struct QueryShape {
  int index = 0;  // kIndexNames
  bool split_tasks = false, split_type_read = false, tasks_json = false, to = false,
       from = false, one_type = false, types_json = false, unread = false, newest = false;
  size_t arms = 1;

  static_assert(kMaxArms < (1u << 16), "arms fit the key's low 16 bits");
  uint64_t Key() const {
    uint64_t k = static_cast<uint64_t>(index);
    for (bool b : {split_tasks, split_type_read, tasks_json, to, from, one_type, types_json,
                   unread, newest}) {
      k = k << 1 | (b ? 1 : 0);
    }
    return k << 16 | arms;
  }
};

constexpr const char* kIndexNames[] = {nullptr, "messages_task", "messages_to", "messages_from",
                                       "messages_type"};  // nullptr: the rowid (seq) itself

std::string BuildSql(const QueryShape& shape) {
  // Conditions every arm shares.
  std::string common = " WHERE seq > ?1";
  if (shape.tasks_json) common += " AND task_id IN (SELECT value FROM json_each(?6))";
  // messages_task holds only a task's messages (migration 0016): its condition, for SQLite to
  // take it. Task 0 (none) is refused in a filter before it gets here.
  if (shape.index == 1) common += " AND task_id != 0";
  if (shape.to) common += " AND recipient = ?3";
  if (shape.from) common += " AND sender = ?4";
  if (shape.one_type) common += " AND type = ?5";
  if (shape.types_json) common += " AND type IN (SELECT value FROM json_each(?5))";
  if (shape.unread) common += " AND read = 0";
  const char* index = kIndexNames[shape.index];
  std::string source = std::string(" FROM messages ") +
                       (index ? std::string("INDEXED BY ") + index : std::string("NOT INDEXED"));
  std::string order = shape.newest ? " ORDER BY seq DESC" : " ORDER BY seq ASC";

  int next = 10;  // arm parameters start at ?10, in PlanMessageQuery's order
  auto arm_where = [&] {
    std::string w = common;
    if (shape.split_tasks) w += " AND task_id = ?" + std::to_string(next++);
    if (shape.split_type_read) {
      w += " AND type = ?" + std::to_string(next++);
      w += " AND read = ?" + std::to_string(next++);
    }
    return w;
  };
  if (shape.arms == 1) {
    return std::string("SELECT ") + kMessageColumns + source + arm_where() + order + " LIMIT ?2";
  }
  std::string merged;
  for (size_t i = 0; i < shape.arms; ++i) {
    if (i) merged += " UNION ALL ";
    merged += "SELECT seq" + source + arm_where();
  }
  // The merged seqs drive a join that reads each row by its seq, in the order the merge
  // yields them: CROSS JOIN keeps them the outer loop, so no sort follows and no row is read
  // that is not returned. (`WHERE seq IN (merged)` built a temporary index of the seqs first:
  // ~25k more instructions per query, most of a Wait that finds nothing yet.) The arms are
  // disjoint (distinct task ids and types, one read state each), so no seq comes twice. The
  // plan is pinned by tests/unit/store/query_plan_test.cpp.
  static_assert(std::string_view(kMessageColumns) ==
                    "seq, created_ms, type, priority, sender, recipient, subject, body, payload, "
                    "task_id, dispatch_id, thread_id, reply_to, read",
                "the joined columns below name kMessageColumns' in its order");
  return "SELECT m.seq, m.created_ms, m.type, m.priority, m.sender, m.recipient, m.subject, "
         "m.body, m.payload, m.task_id, m.dispatch_id, m.thread_id, m.reply_to, m.read FROM (" +
         merged + order + " LIMIT ?2) AS merged_arms CROSS JOIN messages AS m ON m.seq = "
         "merged_arms.seq";
}

// BuildSql, remembered per shape on this thread (a Wait's text is ~1 KiB, and each Wait, Inbox
// and Check plans one). Shapes of up to kMaxArms arms are few; a bigger one is built anew.
const std::string& SqlFor(const QueryShape& shape, std::string* scratch) {
  if (shape.arms > kMaxArms) return *scratch = BuildSql(shape);
  thread_local std::unordered_map<uint64_t, std::string> texts;
  auto [it, added] = texts.try_emplace(shape.Key());
  if (added) it->second = BuildSql(shape);
  return it->second;
}

}  // namespace

MessageQuery PlanMessageQuery(const domain::MessageFilter& f, bool newest_first,
                              const std::vector<std::string>& all_types, bool by_sender) {
  MessageQuery q;
  QueryShape shape;
  std::vector<int64_t> tasks = Distinct(f.task_ids);
  if (!tasks.empty()) {
    shape.index = 1;
    const size_t per_task = TypeReadArms(f, {Arm{}}, all_types).size();
    shape.split_tasks = tasks.size() <= kMaxTaskArms && tasks.size() * per_task <= kMaxArms;
    shape.split_type_read = shape.split_tasks;  // (task, type, read) fixed per arm, since 0009
  } else if (!f.to.empty() && !(by_sender && !f.from.empty())) {
    shape.index = 2;
    shape.split_type_read = true;
  } else if (!f.from.empty()) {
    shape.index = 3;
    shape.split_type_read = true;
  } else if (!f.types.empty() || f.unread_only) {
    shape.index = 4;
    shape.split_type_read = true;
  }

  // The arms: the cross product of the per-arm values.
  std::vector<Arm> arms{Arm{}};
  if (shape.split_tasks) {
    arms.clear();
    for (int64_t t : tasks) arms.push_back(Arm{t, "", -1});
  }
  if (shape.split_type_read) arms = TypeReadArms(f, arms, all_types);
  shape.arms = arms.size();

  // What every arm shares, and what is bound for it.
  shape.tasks_json = q.bind_tasks_json = !tasks.empty() && !shape.split_tasks;
  shape.to = q.bind_to = !f.to.empty();
  shape.from = q.bind_from = !f.from.empty();
  if (!shape.split_type_read) {
    shape.one_type = f.types.size() == 1;
    shape.types_json = q.bind_types_json = f.types.size() > 1;
    if (shape.one_type) q.binds.push_back({5, 0, f.types[0], true});
    shape.unread = f.unread_only;
  }
  shape.newest = newest_first;

  int next = 10;  // arm parameters start at ?10, in BuildSql's order
  for (const Arm& a : arms) {
    if (shape.split_tasks) q.binds.push_back({next++, a.task, "", false});
    if (shape.split_type_read) {
      q.binds.push_back({next++, 0, a.type, true});
      q.binds.push_back({next++, a.read, "", false});
    }
  }
  std::string scratch;
  q.sql = SqlFor(shape, &scratch);
  return q;
}

}  // namespace conclave::store
