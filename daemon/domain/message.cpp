#include "domain/message.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/utf8.h"

namespace conclave::domain {

const std::vector<std::string>& MessageTypes() {
  static const std::vector<std::string> kTypes = {
      "status", "dispatch", "worker_done", "heartbeat", "escalation", "decision_gate",
      "question", "reply", "flow"};
  return kTypes;
}

bool IsMessageType(std::string_view type) {
  const auto& t = MessageTypes();
  return std::find(t.begin(), t.end(), type) != t.end();
}

bool IsPriority(std::string_view p) { return p == "normal" || p == "high" || p == "urgent"; }

bool MessageFilter::Matches(const MessageRecord& m) const {
  if (!types.empty() && std::find(types.begin(), types.end(), m.type) == types.end()) {
    return false;
  }
  if (!to.empty() && m.to != to) return false;
  if (!from.empty() && m.from != from) return false;
  if (!task_ids.empty() &&
      std::find(task_ids.begin(), task_ids.end(), m.task_id) == task_ids.end()) {
    return false;
  }
  if (unread_only && m.read) return false;
  return true;
}

Status ValidateHandleName(std::string_view name, std::string_view field) {
  std::string f(field);
  if (name.empty()) return InvalidArgument(f + ": a handle name is required");
  if (name.size() > kMaxHandleBytes) {
    return InvalidArgument(f + ": handle is " + std::to_string(name.size()) +
                           " bytes, the limit is " + std::to_string(kMaxHandleBytes));
  }
  if (name[0] == '@' || name[0] == '-') {
    return InvalidArgument(f + ": handle '" + std::string(name) +
                           "' may not start with '@' or '-' ('@' starts a group address)");
  }
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-' || c == ':';
    if (!ok) {
      return InvalidArgument(f + ": handle may hold only letters, digits and . _ - : "
                                 "(found a byte 0x" +
                             [c] {
                               const char* hex = "0123456789abcdef";
                               unsigned char u = static_cast<unsigned char>(c);
                               return std::string{hex[u >> 4], hex[u & 15]};
                             }() +
                             ")");
    }
  }
  return Status::Ok();
}

Status ValidateMessage(const MessageRecord& m) {
  if (!IsMessageType(m.type)) {
    std::string all;
    for (const auto& t : MessageTypes()) all += (all.empty() ? "" : ", ") + t;
    return InvalidArgument("type: '" + m.type + "' is not a message type (one of " + all + ")");
  }
  if (!IsPriority(m.priority)) {
    return InvalidArgument("priority: '" + m.priority + "' is not normal, high or urgent");
  }
  if (m.subject.size() > kMaxSubjectBytes) {
    return InvalidArgument("subject: " + std::to_string(m.subject.size()) +
                           " bytes exceeds the limit of " + std::to_string(kMaxSubjectBytes));
  }
  if (m.body.size() > kMaxBodyBytes) {
    return InvalidArgument("body: " + std::to_string(m.body.size()) +
                           " bytes exceeds the limit of " + std::to_string(kMaxBodyBytes));
  }
  if (m.payload.size() > kMaxPayloadBytes) {
    return InvalidArgument("payload: " + std::to_string(m.payload.size()) +
                           " bytes exceeds the limit of " + std::to_string(kMaxPayloadBytes));
  }
  if (!m.payload.empty() && !nlohmann::json::accept(m.payload)) {
    return InvalidArgument("payload: not valid JSON");
  }
  if (m.task_id < 0) return InvalidArgument("task_id: must not be negative");
  for (const std::string* f : {&m.subject, &m.body, &m.from, &m.payload}) {
    if (ValidUtf8(*f) != *f) return InvalidArgument("subject/body/payload: not valid UTF-8");
  }
  return Status::Ok();
}

bool IsReservedSender(std::string_view name) {
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& c : out) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
    return out;
  };
  std::string n = lower(name);
  return n == kDaemonSender || n == kReviewSender;
}

bool IsWorkerReportType(std::string_view type) {
  return type == "worker_done" || type == "heartbeat" || type == "status" || type == "question" ||
         type == "escalation";
}

bool WorthNotifying(const MessageRecord& m) {
  if (m.type == "escalation") return m.priority == "urgent";
  if (m.type != "flow") return false;
  auto p = nlohmann::json::parse(m.payload, nullptr, false);
  if (!p.is_object() || !p.contains("step") || !p["step"].is_string()) return false;
  const std::string step = p["step"];
  return step == "ready" || step == "needs_human";
}

}  // namespace conclave::domain
