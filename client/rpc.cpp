#include "rpc.h"

#include <google/protobuf/util/json_util.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>

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
  channel_ = grpc::CreateCustomChannel(target_, grpc::InsecureChannelCredentials(), args);
  stub_ = v1::Conclave::NewStub(channel_);
}

std::unique_ptr<grpc::ClientContext> Client::Context(int64_t deadline_ms) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
  if (const char* tok = std::getenv("CONCLAVE_TOKEN"); tok && *tok) {
    ctx->AddMetadata("authorization", std::string("Bearer ") + tok);
  }
  return ctx;
}

int Client::Fail(const grpc::Status& s) const {
  using grpc::StatusCode;
  if (s.error_code() == StatusCode::UNAVAILABLE || s.error_code() == StatusCode::DEADLINE_EXCEEDED) {
    std::cerr << "conclave: cannot reach conclaved at " << target_ << " (" << s.error_message()
              << ").\n  Start it with `conclaved &` (or `systemctl --user start conclaved`), "
                 "or point --socket / CONCLAVE_SOCKET at its socket.\n";
    return kExitUnreachable;
  }
  const char* code = "error";
  switch (s.error_code()) {
    case StatusCode::INVALID_ARGUMENT: code = "invalid argument"; break;
    case StatusCode::NOT_FOUND: code = "not found"; break;
    case StatusCode::ALREADY_EXISTS: code = "already exists"; break;
    case StatusCode::FAILED_PRECONDITION: code = "failed precondition"; break;
    case StatusCode::RESOURCE_EXHAUSTED: code = "resource exhausted"; break;
    case StatusCode::PERMISSION_DENIED: code = "permission denied"; break;
    case StatusCode::UNAUTHENTICATED: code = "unauthenticated"; break;
    default: break;
  }
  if (json_) {
    std::cout << "{\"error\":{\"code\":" << static_cast<int>(s.error_code()) << ",\"message\":";
    std::string m = s.error_message();
    std::string esc;
    for (char c : m) {
      if (c == '"' || c == '\\') esc += '\\';
      if (static_cast<unsigned char>(c) < 0x20) continue;
      esc += c;
    }
    std::cout << "\"" << esc << "\"}}\n";
  }
  std::cerr << "conclave: " << code << ": " << s.error_message() << "\n";
  return kExitError;
}

std::string ToJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(m, &out, opts);
  return out;
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
