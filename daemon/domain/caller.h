// Who is calling, and what they may do (DESIGN §1 "Trust: a worker is untrusted"). The daemon
// decides from the kernel (the socket peer's credentials and process ancestry), never from
// what the caller says. The permission table is a pure rule: a worker may only report on its
// own dispatch and read what is addressed to it; everything else is the coordinator's.
// Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace conclave::domain {

enum class CallerRole {
  kCoordinator,    // same uid, not a descendant of the daemon (a person, a script, a plugin)
  kWorker,         // a descendant of the daemon bound to one running dispatch
  kUnboundWorker,  // a descendant whose dispatch cannot be told: may only send with its token
  kForeign,        // another uid: refused
};

std::string_view CallerRoleName(CallerRole r);

struct Caller {
  CallerRole role = CallerRole::kCoordinator;
  int64_t dispatch_id = 0;  // kWorker: its dispatch
  int64_t task_id = 0;
  std::string terminal;  // kWorker: its terminal handle (its address)
  uint32_t uid = 0;
  int32_t pid = 0;
  // Read at accept from /proc (a unix-socket caller): its executable and the terminal its
  // stdin is ("" = not a terminal) — who made a decision, for a review's sign-off.
  std::string exe, tty;
  bool IsWorker() const { return role == CallerRole::kWorker || role == CallerRole::kUnboundWorker; }
};

// Every RPC of conclave.v1.Conclave (and the standard services a caller may reach).
enum class Rpc {
  kGetStatus, kRegisterHandle, kListHandles, kSend, kCheck, kReply, kInbox, kWait, kWatch,
  kListProfiles, kCreateTerminal, kListTerminals, kGetTerminal, kCloseTerminal, kReadTranscript,
  kFollowTranscript, kCreateTask, kListTasks, kGetTask, kUpdateTask, kCancelTask, kDispatch,
  kCreateGate, kResolveGate, kListGates, kStartReview, kGetReview, kListReviews, kWaitReview,
  kRegate, kReport, kDoctor, kHealth, kFlow,
};

std::string_view RpcName(Rpc rpc);

enum class Permission {
  kAllow,       // as asked
  kOwnOnly,     // only on the caller's own dispatch / handle / task (the service binds it)
  kDeny,
};

// Deny by default: a worker may Send and Reply on its own dispatch, Check / Wait / Inbox what
// is addressed to its own handle, read its own task, and read the daemon's status and health;
// an unbound worker may only Send (with its dispatch token); a foreign uid may do nothing.
Permission MayCall(CallerRole role, Rpc rpc);

}  // namespace conclave::domain
