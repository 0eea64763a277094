#include "store/message_query.h"

#include <algorithm>
#include <string_view>

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

MessageQuery PlanMessageQuery(const domain::MessageFilter& f, bool newest_first,
                              const std::vector<std::string>& all_types, bool by_sender) {
  MessageQuery q;
  const char* index = nullptr;  // nullptr: the rowid (seq) itself
  std::vector<int64_t> tasks = Distinct(f.task_ids);
  bool split_tasks = false;      // one arm per task id
  bool split_type_read = false;  // the index holds (type, read) before seq
  if (!tasks.empty()) {
    index = "messages_task";
    const size_t per_task = TypeReadArms(f, {Arm{}}, all_types).size();
    split_tasks = tasks.size() <= kMaxTaskArms && tasks.size() * per_task <= kMaxArms;
    split_type_read = split_tasks;  // (task, type, read) fixed per arm, since 0009
  } else if (!f.to.empty() && !(by_sender && !f.from.empty())) {
    index = "messages_to";
    split_type_read = true;
  } else if (!f.from.empty()) {
    index = "messages_from";
    split_type_read = true;
  } else if (!f.types.empty() || f.unread_only) {
    index = "messages_type";
    split_type_read = true;
  }

  // The arms: the cross product of the per-arm values.
  std::vector<Arm> arms{Arm{}};
  if (split_tasks) {
    arms.clear();
    for (int64_t t : tasks) arms.push_back(Arm{t, "", -1});
  }
  if (split_type_read) arms = TypeReadArms(f, arms, all_types);

  // Conditions every arm shares.
  std::string common = " WHERE seq > ?1";
  if (!tasks.empty() && !split_tasks) {
    common += " AND task_id IN (SELECT value FROM json_each(?6))";
    q.bind_tasks_json = true;
  }
  if (!f.to.empty()) {
    common += " AND recipient = ?3";
    q.bind_to = true;
  }
  if (!f.from.empty()) {
    common += " AND sender = ?4";
    q.bind_from = true;
  }
  if (!split_type_read) {
    if (f.types.size() == 1) {
      common += " AND type = ?5";
      q.binds.push_back({5, 0, f.types[0], true});
    } else if (!f.types.empty()) {
      common += " AND type IN (SELECT value FROM json_each(?5))";
      q.bind_types_json = true;
    }
    if (f.unread_only) common += " AND read = 0";
  }
  std::string source = std::string(" FROM messages ") +
                       (index ? std::string("INDEXED BY ") + index : std::string("NOT INDEXED"));
  std::string order = newest_first ? " ORDER BY seq DESC" : " ORDER BY seq ASC";

  int next = 10;  // arm parameters start at ?10
  auto arm_where = [&](const Arm& a) {
    std::string w = common;
    if (split_tasks) {
      w += " AND task_id = ?" + std::to_string(next);
      q.binds.push_back({next++, a.task, "", false});
    }
    if (split_type_read) {
      w += " AND type = ?" + std::to_string(next);
      q.binds.push_back({next++, 0, a.type, true});
      w += " AND read = ?" + std::to_string(next);
      q.binds.push_back({next++, a.read, "", false});
    }
    return w;
  };
  if (arms.size() == 1) {
    q.sql = std::string("SELECT ") + kMessageColumns + source + arm_where(arms[0]) + order +
            " LIMIT ?2";
    return q;
  }
  std::string merged;
  for (size_t i = 0; i < arms.size(); ++i) {
    if (i) merged += " UNION ALL ";
    merged += "SELECT seq" + source + arm_where(arms[i]);
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
  q.sql = "SELECT m.seq, m.created_ms, m.type, m.priority, m.sender, m.recipient, m.subject, "
          "m.body, m.payload, m.task_id, m.dispatch_id, m.thread_id, m.reply_to, m.read FROM (" +
          merged + order + " LIMIT ?2) AS merged_arms CROSS JOIN messages AS m ON m.seq = "
          "merged_arms.seq";
  return q;
}

}  // namespace conclave::store
