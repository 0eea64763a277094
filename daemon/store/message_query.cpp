#include "store/message_query.h"

#include <algorithm>

namespace conclave::store {
namespace {

template <typename T>
std::vector<T> Distinct(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
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

MessageQuery PlanMessageQuery(const domain::MessageFilter& f, bool newest_first,
                              const std::vector<std::string>& all_types) {
  MessageQuery q;
  const char* index = nullptr;  // nullptr: the rowid (seq) itself
  // Whether the driving index holds type and read before seq (they must then be fixed).
  bool index_has_type_read = false;
  if (!f.task_ids.empty()) {
    index = "messages_task";
    q.tasks = Distinct(f.task_ids);
  } else if (!f.to.empty()) {
    index = "messages_to";
    index_has_type_read = true;
  } else if (!f.from.empty()) {
    index = "messages_from";
  } else if (!f.types.empty() || f.unread_only) {
    index = "messages_type";
    index_has_type_read = true;
  }

  std::string where = " WHERE seq > ?1";
  if (!f.task_ids.empty()) where += " AND task_id = ?5";
  if (!f.to.empty()) {
    where += " AND recipient = ?3";
    q.bind_to = true;
  }
  if (!f.from.empty()) {
    where += " AND sender = ?4";
    q.bind_from = true;
  }
  if (index_has_type_read) {
    q.types = Distinct(f.types.empty() ? all_types : f.types);
    q.reads = f.unread_only ? std::vector<int>{0} : std::vector<int>{0, 1};
    where += " AND type = ?6 AND read = ?8";
  } else {
    if (f.types.size() == 1) {
      q.types = f.types;
      where += " AND type = ?6";
    } else if (!f.types.empty()) {
      where += " AND type IN (SELECT value FROM json_each(?7))";
      q.bind_types_json = true;
    }
    if (f.unread_only) where += " AND read = 0";
  }
  std::string from = std::string(" FROM messages ") +
                     (index ? std::string("INDEXED BY ") + index : std::string("NOT INDEXED"));
  std::string order = newest_first ? " ORDER BY seq DESC LIMIT ?2" : " ORDER BY seq ASC LIMIT ?2";
  q.rows_sql = std::string("SELECT ") + kMessageColumns + from + where + order;
  q.seqs_sql = "SELECT seq" + from + where + order;
  return q;
}

}  // namespace conclave::store
