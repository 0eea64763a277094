#include "domain/caller.h"

#include <array>

namespace conclave::domain {
namespace {
constexpr std::array<std::string_view, 34> kRpcNames = {
    "GetStatus",     "RegisterHandle", "ListHandles",      "Send",        "Check",
    "Reply",         "Inbox",          "Wait",             "Watch",       "ListProfiles",
    "CreateTerminal", "ListTerminals", "GetTerminal",      "CloseTerminal", "ReadTranscript",
    "FollowTranscript", "CreateTask",  "ListTasks",        "GetTask",     "UpdateTask",
    "CancelTask",    "Dispatch",       "CreateGate",       "ResolveGate", "ListGates",
    "StartReview",   "GetReview",      "ListReviews",      "WaitReview",  "Regate",
    "Report",        "Doctor",         "Health",           "Flow"};
}  // namespace

std::string_view CallerRoleName(CallerRole r) {
  switch (r) {
    case CallerRole::kCoordinator: return "coordinator";
    case CallerRole::kWorker: return "worker";
    case CallerRole::kUnboundWorker: return "unbound worker";
    case CallerRole::kForeign: return "foreign user";
  }
  return "";
}

std::string_view RpcName(Rpc rpc) { return kRpcNames[static_cast<size_t>(rpc)]; }

Permission MayCall(CallerRole role, Rpc rpc) {
  switch (role) {
    case CallerRole::kCoordinator:
      return Permission::kAllow;
    case CallerRole::kForeign:
      return Permission::kDeny;
    case CallerRole::kUnboundWorker:
      return rpc == Rpc::kSend ? Permission::kOwnOnly : Permission::kDeny;
    case CallerRole::kWorker:
      switch (rpc) {
        case Rpc::kGetStatus:
        case Rpc::kHealth:
          return Permission::kAllow;
        case Rpc::kSend:
        case Rpc::kReply:
        case Rpc::kCheck:
        case Rpc::kWait:
        case Rpc::kInbox:
        case Rpc::kGetTask:
          return Permission::kOwnOnly;
        default:
          return Permission::kDeny;
      }
  }
  return Permission::kDeny;
}

}  // namespace conclave::domain
