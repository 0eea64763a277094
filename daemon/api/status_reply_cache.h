// StatusReplyCache: GetStatus's reply, kept on the loop between calls. GetStatus is what the
// editor plugins and scripts poll, and building its reply was most of the daemon's own work
// per call: the status view with its map of ~30 counts, copied into a new StatusReply, which
// gRPC then serialized and freed (`bench --only unary`: building it alone, reply discarded,
// took ~12 µs of a ~190 µs round trip). Here the reply is built from Services::Status() only
// when what it shows may have changed — the store (StatusReads re-read it), the disk figures,
// or cooldowns that expire with time — and otherwise only its live fields are set in place
// (uptime, last_seq and Services::LiveCounts()) before it is serialized into the call's
// buffer. What a call receives equals ToProto(Status()) at that moment.
// Loop thread only.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include <array>
#include <cstdint>

#include "conclave/v1/conclave.pb.h"
#include "service/retention.h"
#include "service/services.h"

namespace conclave::api {

class StatusReplyCache {
 public:
  // The daemon's status now, serialized.
  grpc::ByteBuffer Serialize(service::Services& services);
  // How many times the reply was built whole (tests).
  int64_t builds() const { return builds_; }

 private:
  void Build(service::Services& services, const service::StatusReads::Snapshot& stored);

  ::conclave::v1::StatusReply reply_;
  bool built_ = false;      // false also while a build is under way: live_ is then not valid
  int64_t rereads_ = -1;    // StatusReads::rereads() when built
  service::DiskView disk_;  // the disk figures when built
  std::array<int64_t*, service::Services::kLiveCounts> live_{};  // into reply_'s counts map
  int64_t builds_ = 0;
};

}  // namespace conclave::api
