#include "api/status_reply_cache.h"

#include "api/proto_convert.h"

namespace conclave::api {

grpc::ByteBuffer StatusReplyCache::Serialize(service::Services& services) {
  const service::StatusReads::Snapshot& stored = services.status_reads.Get();  // may re-read
  // Cooldowns are shown while they last: with any in the snapshot, the clock decides the list.
  if (!built_ || services.status_reads.rereads() != rereads_ ||
      services.retention.disk() != disk_ || !stored.cooldowns.empty()) {
    Build(services, stored);
  } else {
    reply_.set_uptime_ms(services.UptimeMs());
    reply_.set_last_seq(services.LastSeq());
    const auto live = services.LiveCounts();
    for (size_t i = 0; i < live.size(); ++i) *live_[i] = live[i].second;
  }
  const size_t size = reply_.ByteSizeLong();
  grpc::Slice slice(size);
  reply_.SerializeWithCachedSizesToArray(const_cast<uint8_t*>(slice.begin()));
  return grpc::ByteBuffer(&slice, 1);
}

void StatusReplyCache::Build(service::Services& services,
                             const service::StatusReads::Snapshot& stored) {
  built_ = false;  // should anything below throw, the next call builds again
  reply_.Clear();
  ToProto(services.Status(stored), &reply_);
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
