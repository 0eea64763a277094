// MessageRecord: one delivery of a message (a group send makes one per recipient).
// MessageFilter: what a Wait / Watch / Inbox asks for; Matches() is the in-memory twin of the
// SQL the store builds from the same filter, so waking a waiter and querying agree (for a
// filter MessagingService::ValidateFilter admits: its task ids name tasks, none is 0).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace conclave::domain {

struct MessageRecord {
  int64_t seq = 0;
  int64_t created_ms = 0;
  std::string type;
  std::string priority = "normal";
  std::string from;
  std::string to;
  std::string subject;
  std::string body;
  std::string payload;  // JSON text or empty
  int64_t task_id = 0;
  int64_t dispatch_id = 0;
  std::string thread_id;
  int64_t reply_to = 0;
  bool read = false;
};

struct MessageFilter {
  std::vector<std::string> types;  // empty = any
  std::string to;                  // empty = any recipient
  std::string from;                // empty = any sender
  std::vector<int64_t> task_ids;   // empty = any; never 0 (no task: the store matches none)
  bool unread_only = false;

  bool Matches(const MessageRecord& m) const;
};

inline constexpr size_t kMaxSubjectBytes = 1024;
inline constexpr size_t kMaxBodyBytes = 1 << 20;        // 1 MiB
inline constexpr size_t kMaxPayloadBytes = 256 << 10;   // 256 KiB
inline constexpr size_t kMaxHandleBytes = 64;

// The names the daemon speaks as: its own messages (worker_done, heartbeats, escalations...)
// and its review service's coordinator handle. Only the daemon sends from them.
inline constexpr std::string_view kDaemonSender = "conclaved";
inline constexpr std::string_view kReviewSender = "conclave-review";
// True for a name only the daemon may send from (case-insensitive).
bool IsReservedSender(std::string_view name);
// The types a worker may send about its own dispatch.
bool IsWorkerReportType(std::string_view type);

// The closed list of message types and priorities.
bool IsMessageType(std::string_view type);
bool IsPriority(std::string_view priority);

// Whether a person should hear of a daemon message outside the inbox (the config's
// notify_command): a flow that reached ready or needs_human, or an urgent escalation.
bool WorthNotifying(const MessageRecord& m);
const std::vector<std::string>& MessageTypes();

// Validates a handle name: 1..64 bytes of [A-Za-z0-9._:-], not starting with '@' or '-'.
Status ValidateHandleName(std::string_view name, std::string_view field);

// Validates a send: type, priority, sizes, payload is JSON. Field names in errors match the
// API's field names.
Status ValidateMessage(const MessageRecord& m);

}  // namespace conclave::domain
