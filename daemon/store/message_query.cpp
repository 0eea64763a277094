#include "store/message_query.h"

namespace conclave::store {
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

MessageQuery PlanMessageQuery(const domain::MessageFilter& f, bool newest_first) {
  MessageQuery q;
  const bool has_types = !f.types.empty();
  const char* index = nullptr;  // nullptr: the rowid (seq) itself
  bool type_in_index = false;   // the driving index holds type: split by type
  bool unread_in_index = false;
  if (!f.task_ids.empty()) {
    index = "messages_task";
    q.split = f.task_ids.size() > 1 ? MessageQuery::Split::kByTask : MessageQuery::Split::kNone;
  } else if (!f.to.empty()) {
    unread_in_index = f.unread_only;
    type_in_index = has_types;
    index = f.unread_only ? (has_types ? "messages_unread_to_type" : "messages_unread_to")
                          : (has_types ? "messages_to_type" : "messages_to");
  } else if (f.unread_only) {
    index = "messages_unread_seq";
    unread_in_index = true;
  } else if (!f.from.empty()) {
    index = "messages_from";
  } else if (has_types) {
    index = "messages_type";
    type_in_index = true;
  }
  if (type_in_index && f.types.size() > 1) q.split = MessageQuery::Split::kByType;

  std::string& sql = q.sql;
  sql = std::string("SELECT ") + kMessageColumns + " FROM messages " +
        (index ? std::string("INDEXED BY ") + index : std::string("NOT INDEXED")) +
        " WHERE seq > ?1";
  if (!f.to.empty()) {
    sql += " AND recipient = ?3";
    q.bind_to = true;
  }
  if (!f.from.empty()) {
    sql += " AND sender = ?4";
    q.bind_from = true;
  }
  if (!f.task_ids.empty()) {
    sql += " AND task_id = ?5";
    q.bind_task = true;
  }
  if (has_types) {
    if (type_in_index || f.types.size() == 1) {
      sql += " AND type = ?6";
      q.bind_type = true;
    } else {
      sql += " AND type IN (SELECT value FROM json_each(?7))";
      q.bind_types_json = true;
    }
  }
  if (f.unread_only || unread_in_index) sql += " AND read = 0";
  sql += newest_first ? " ORDER BY seq DESC LIMIT ?2" : " ORDER BY seq ASC LIMIT ?2";
  return q;
}

}  // namespace conclave::store
