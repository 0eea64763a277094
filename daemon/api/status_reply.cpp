#include "api/status_reply.h"

#include "api/proto_convert.h"

namespace conclave::api {

namespace {

bool SameDisk(const service::DiskView& a, const service::DiskView& b) {
  return a.state_bytes == b.state_bytes && a.dispatch_bytes == b.dispatch_bytes &&
         a.database_bytes == b.database_bytes && a.free_bytes == b.free_bytes &&
         a.measured_ms == b.measured_ms && a.removed_dispatch_dirs == b.removed_dispatch_dirs &&
         a.removed_messages == b.removed_messages;
}

}  // namespace

grpc::ByteBuffer StatusReplyCache::Serialize(service::Services& services) {
  const service::StatusReads::Snapshot& stored = services.status_reads.Get();  // may re-read
  // Cooldowns are shown while they last: with any in the snapshot, the clock decides the list.
  if (!built_ || services.status_reads.rereads() != rereads_ ||
      !SameDisk(services.retention.disk(), disk_) || !stored.cooldowns.empty()) {
    Build(services);
  } else {
    reply_.set_uptime_ms(services.core.clock.NowMs() - services.core.started_ms);
    reply_.set_last_seq(services.LastSeq());
    const auto live = services.LiveCounts();
    for (size_t i = 0; i < live.size(); ++i) *live_[i] = live[i].second;
  }
  const size_t size = reply_.ByteSizeLong();
  grpc::Slice slice(size);
  reply_.SerializeWithCachedSizesToArray(const_cast<uint8_t*>(slice.begin()));
  return grpc::ByteBuffer(&slice, 1);
}

void StatusReplyCache::Build(service::Services& services) {
  reply_.Clear();
  ToProto(services.Status(), &reply_);
  // Map values stay where they are until erased, and nothing is inserted until the next build.
  auto* counts = reply_.mutable_counts();
  const auto live = services.LiveCounts();
  for (size_t i = 0; i < live.size(); ++i) live_[i] = &(*counts)[live[i].first];
  built_ = true;
  rereads_ = services.status_reads.rereads();
  disk_ = services.retention.disk();
  ++builds_;
}

}  // namespace conclave::api
