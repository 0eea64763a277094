#include "rpc.h"

#include <google/protobuf/util/json_util.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

namespace conclave::client {

std::string ResolveTarget(const std::string& flag) {
  std::string s = flag;
  if (s.empty()) {
    if (const char* e = std::getenv("CONCLAVE_SOCKET")) s = e;
  }
  if (s.empty()) {
    if (const char* rt = std::getenv("XDG_RUNTIME_DIR"); rt && *rt) {
      s = std::string(rt) + "/conclave/conclave.sock";
    } else if (const char* st = std::getenv("XDG_STATE_HOME"); st && *st) {
      s = std::string(st) + "/conclave/conclave.sock";
    } else {
      const char* home = std::getenv("HOME");
      s = std::string(home ? home : "/tmp") + "/.local/state/conclave/conclave.sock";
    }
  }
  if (s.rfind("tcp:", 0) == 0) return s.substr(4);
  if (s.rfind("unix:", 0) == 0) return s;
  return "unix:" + s;
}

Client::Client(const Options& o) : target_(ResolveTarget(o.socket)), json_(o.json) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 << 20);
  args.SetMaxSendMessageSize(16 << 20);
  // A restarted daemon is found again within 2 s (gRPC's default backoff grows to 120 s).
  // (GRPC_ARG_MIN_RECONNECT_BACKOFF_MS is left alone: it is also the connect timeout.)
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  channel_ = grpc::CreateCustomChannel(target_, grpc::InsecureChannelCredentials(), args);
  stub_ = v1::Conclave::NewStub(channel_);
}

std::unique_ptr<grpc::ClientContext> Client::Context(int64_t deadline_ms) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (deadline_ms > 0) {
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
  }
  if (const char* tok = std::getenv("CONCLAVE_TOKEN"); tok && *tok) {
    ctx->AddMetadata("authorization", std::string("Bearer ") + tok);
  }
  return ctx;
}

namespace {

// The daemon marks every status of its API's calls (api/grpc_server.h kOriginKey).
bool SentByDaemon(const grpc::ClientContext* ctx) {
  if (!ctx) return false;
  const auto& md = ctx->GetServerTrailingMetadata();
  auto it = md.find("conclave-origin");
  return it != md.end() && std::string(it->second.data(), it->second.size()) == "conclaved";
}

const char* CodeName(grpc::StatusCode code) {
  using grpc::StatusCode;
  switch (code) {
    case StatusCode::CANCELLED:
      return "cancelled";
    case StatusCode::INVALID_ARGUMENT:
      return "invalid argument";
    case StatusCode::DEADLINE_EXCEEDED:
      return "deadline exceeded";
    case StatusCode::NOT_FOUND:
      return "not found";
    case StatusCode::ALREADY_EXISTS:
      return "already exists";
    case StatusCode::PERMISSION_DENIED:
      return "permission denied";
    case StatusCode::RESOURCE_EXHAUSTED:
      return "resource exhausted";
    case StatusCode::FAILED_PRECONDITION:
      return "failed precondition";
    case StatusCode::ABORTED:
      return "aborted";
    case StatusCode::OUT_OF_RANGE:
      return "out of range";
    case StatusCode::UNIMPLEMENTED:
      return "unimplemented";
    case StatusCode::INTERNAL:
      return "internal error";
    case StatusCode::UNAVAILABLE:
      return "unavailable";
    case StatusCode::DATA_LOSS:
      return "data loss";
    case StatusCode::UNAUTHENTICATED:
      return "unauthenticated";
    default:
      return "error";
  }
}

void AddPayloads(nlohmann::ordered_json& j) {
  if (j.is_object()) {
    auto it = j.find("payload_json");
    if (it != j.end() && it->is_string() && !j.contains("payload")) {
      const std::string text = it->get<std::string>();
      nlohmann::ordered_json value = nullptr;
      if (!text.empty()) {
        value = nlohmann::ordered_json::parse(text, nullptr, false);
        if (value.is_discarded()) value = text;
      }
      j["payload"] = std::move(value);
    }
  }
  if (j.is_object() || j.is_array()) {
    for (auto& child : j) AddPayloads(child);
  }
}

}  // namespace

bool Client::Unreachable(const grpc::Status& s, const grpc::ClientContext* ctx) const {
  if (SentByDaemon(ctx)) return false;
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) return true;
  if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return channel_->GetState(false) != GRPC_CHANNEL_READY;  // never got through
  }
  return false;
}

int Client::Fail(const grpc::Status& s, const grpc::ClientContext* ctx) const {
  bool unreachable = Unreachable(s, ctx);
  if (json_) {
    nlohmann::ordered_json err = {{"code", static_cast<int>(s.error_code())},
                                  {"message", s.error_message()},
                                  {"unreachable", unreachable}};
    std::cout << nlohmann::ordered_json{{"error", err}}.dump(
                     -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
              << "\n";
  }
  if (unreachable) {
    std::cerr << "conclave: cannot reach conclaved at " << target_ << " (" << s.error_message()
              << ").\n  Start it with `conclaved &` (or `systemctl --user start conclaved`), "
                 "or point --socket / CONCLAVE_SOCKET at its socket.\n";
    return kExitUnreachable;
  }
  std::cerr << "conclave: " << CodeName(s.error_code()) << ": " << s.error_message() << "\n";
  return kExitError;
}

std::string ToJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(m, &out, opts);
  if (out.find("\"payload_json\"") == std::string::npos) return out;
  auto j = nlohmann::ordered_json::parse(out, nullptr, false);
  if (j.is_discarded()) return out;
  AddPayloads(j);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void PrintJson(const google::protobuf::Message& m) { std::cout << ToJson(m) << "\n"; }

std::string FormatTime(int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  std::time_t t = unix_ms / 1000;
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

}  // namespace conclave::client
