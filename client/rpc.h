// Client plumbing: finding the daemon's socket, one stub, mapping gRPC errors to exit codes,
// and printing (human text by default, JSON with --json).
// Exit 3 means only "the daemon cannot be reached": a status the daemon itself sent (it
// carries the trailing metadata conclave-origin: conclaved) is printed as what it is — e.g.
// UNAVAILABLE "conclaved is shutting down" or "the store is refusing writes" — with exit 1.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "conclave/v1/conclave.grpc.pb.h"

namespace conclave::client {

namespace v1 = ::conclave::v1;

// Exit codes: scripts depend on these.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnreachable = 3;
inline constexpr int kExitTimeout = 4;
inline constexpr int kExitGateNotApproved = 5;

struct Options {
  std::string socket;  // --socket, CONCLAVE_SOCKET, or the default
  bool json = false;
};

// The address gRPC dials: "unix:/path" or "HOST:PORT".
std::string ResolveTarget(const std::string& flag);

class Client {
 public:
  explicit Client(const Options& o);
  v1::Conclave::Stub& stub() { return *stub_; }
  // A context with a deadline (ms; 0 = none, for streams) and the bearer token from
  // CONCLAVE_TOKEN when set.
  std::unique_ptr<grpc::ClientContext> Context(int64_t deadline_ms = 30000) const;
  const std::string& target() const { return target_; }
  bool json() const { return json_; }

  // Reports a failed call on stderr (and as {"error":...} on stdout with --json) and returns
  // the exit code to use. ctx is the failed call's context (its trailing metadata tells
  // whether the daemon sent the status).
  int Fail(const grpc::Status& s, const grpc::ClientContext* ctx) const;
  // True when the failure means the daemon could not be reached (no status came from it).
  bool Unreachable(const grpc::Status& s, const grpc::ClientContext* ctx) const;

 private:
  std::string target_;
  bool json_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Conclave::Stub> stub_;
};

// Prints a protobuf message as one JSON document (snake_case field names). Every object with
// a payload_json string (a Message, wherever it appears) also gets "payload": the same data as
// a JSON value (null when there is none; the string itself when it is not valid JSON).
void PrintJson(const google::protobuf::Message& m);
std::string ToJson(const google::protobuf::Message& m);
std::string FormatTime(int64_t unix_ms);

}  // namespace conclave::client
