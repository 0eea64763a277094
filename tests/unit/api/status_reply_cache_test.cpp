// Unit tests: GetStatus's kept reply (api/status_reply_cache) always equals the reply built afresh
// from Services::Status(), whatever changed in between: the store, live counts, the clock, the
// disk figures, a cooldown expiring. Each case would fail if the cache missed that change.
#include <google/protobuf/util/message_differencer.h>
#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <vector>

#include "api/proto_convert.h"
#include "api/status_reply_cache.h"
#include "service_harness.h"

namespace conclave {
namespace {

namespace v1 = ::conclave::v1;

v1::StatusReply Parse(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  REQUIRE(buffer.Dump(&slices).ok());
  std::string bytes;
  for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  v1::StatusReply reply;
  REQUIRE(reply.ParseFromString(bytes));
  return reply;
}

struct Fixture {
  testing::ServiceHarness h;
  api::StatusReplyCache cache;

  // Serializes through the cache and checks the reply against a fresh build; returns it.
  // Inside an open batch every status read re-reads the store, so the fresh build counts one
  // more re-read than the kept reply: that one count is then left out of the comparison.
  v1::StatusReply Check() {
    v1::StatusReply got = Parse(cache.Serialize(*h.services));
    v1::StatusReply want;
    api::ToProto(h.services->Status(), &want);
    if (h.db->InTransaction()) {
      (*got.mutable_counts())["status_rereads"] = want.counts().at("status_rereads");
    }
    INFO("kept:  " << got.ShortDebugString());
    INFO("fresh: " << want.ShortDebugString());
    REQUIRE(google::protobuf::util::MessageDifferencer::Equivalent(got, want));
    return got;
  }
};

int64_t Count(const v1::StatusReply& r, const std::string& name) {
  auto it = r.counts().find(name);
  return it == r.counts().end() ? -1 : it->second;
}

TEST_CASE("the kept status reply follows the clock and live counts without a rebuild",
          "[api][status-reply]") {
  Fixture f;
  v1::StatusReply first = f.Check();
  const int64_t builds = f.cache.builds();
  REQUIRE(builds == 1);

  f.h.clock.Advance(1234);
  v1::StatusReply later = f.Check();
  CHECK(later.uptime_ms() == first.uptime_ms() + 1234);

  // A Wait parks: a live count moves with no write.
  service::WaitInput in;
  in.filter.to = "coordinator";
  in.after_seq = f.h.services->LastSeq();
  in.timeout_ms = 60000;
  bool answered = false;
  f.h.services->messaging.Wait(in, [&](StatusOr<service::WaitResult>) { answered = true; });
  v1::StatusReply parked = f.Check();
  CHECK(Count(parked, "waiters") == Count(first, "waiters") + 1);
  CHECK(f.cache.builds() == builds);
  CHECK_FALSE(answered);
}

TEST_CASE("the kept status reply is rebuilt when the store, the disk or a cooldown changes",
          "[api][status-reply]") {
  Fixture f;
  auto& core = *f.h.core;
  v1::StatusReply first = f.Check();

  // A committed write: the store's counts (and last_seq, with a message) change.
  const int64_t before = f.cache.builds();
  REQUIRE(core.batcher.Write([&] {
    core.handles.Insert({"new-handle", "handle", 1, false});
    return Status::Ok();
  }).ok());
  core.batcher.Flush();
  v1::StatusReply written = f.Check();
  CHECK(Count(written, "handles") == Count(first, "handles") + 1);
  CHECK(f.cache.builds() == before + 1);

  // The retention pass measures the disk (at a later time, so its figures differ).
  f.h.clock.Advance(1);
  bool measured = false;
  f.h.services->retention.RunPass([&] { measured = true; });
  REQUIRE(f.h.RunUntil([&] { return measured; }));
  v1::StatusReply disk = f.Check();
  CHECK(disk.disk().measured_unix_ms() == f.h.clock.NowMs());

  // A cooldown shows while it lasts and leaves with the clock, no write in between.
  REQUIRE(core.batcher.Write([&] {
    core.cooldowns.Put({"pa", core.clock.NowMs() + 5000, "rate limited"});
    return Status::Ok();
  }).ok());
  core.batcher.Flush();
  CHECK(f.Check().cooldowns_size() == 1);
  f.h.clock.Advance(6000);
  CHECK(f.Check().cooldowns_size() == 0);
  CHECK(f.Check().cooldowns_size() == 0);
}

TEST_CASE("a status reply read inside an open batch is not kept past it", "[api][status-reply]") {
  Fixture f;
  auto& core = *f.h.core;
  v1::StatusReply first = f.Check();
  REQUIRE(core.batcher.Write([&] {
    core.handles.Insert({"phantom", "handle", 1, false});
    return Status::Ok();
  }).ok());
  // Inside the batch: one re-read of the store a call, and it shows the insert.
  const int64_t rereads = f.h.services->status_reads.rereads();
  f.cache.Serialize(*f.h.services);
  CHECK(f.h.services->status_reads.rereads() == rereads + 1);
  CHECK(Count(f.Check(), "handles") == Count(first, "handles") + 1);
  f.h.db->SetFaultHookForTest([](std::string_view sql) {
    return sql == "COMMIT" ? SQLITE_FULL : SQLITE_OK;
  });
  core.batcher.Flush();  // rolled back
  f.h.db->SetFaultHookForTest(nullptr);
  CHECK(Count(f.Check(), "handles") == Count(first, "handles"));
}

}  // namespace
}  // namespace conclave
