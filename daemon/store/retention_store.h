// RetentionStore: the reads and deletes of the retention pass — where in the message log a
// point in time falls, old heartbeats and read messages, the finished dispatches in id order.
// Every query is a primary-key seek or range (no scan of messages or dispatches).
// Called only from the service loop thread; deletes inside the commit batcher's transaction.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "store/database.h"

namespace conclave::store {

class RetentionStore {
 public:
  explicit RetentionStore(Database& db) : db_(db) {}

  // The highest seq of a message created before cutoff_ms (0 = none), by binary search over
  // seq (seq grows with time): a few dozen primary-key reads whatever the log's size.
  int64_t LastSeqBefore(int64_t cutoff_ms, int64_t last_seq);
  struct Deleted {
    int count = 0;
    int64_t last_seq = 0;  // the highest seq deleted (0: none)
    bool cut = false;      // stopped by out_of_time (more of the batch may be left)
  };
  // Deletes at most `limit` messages with seq > after_seq, lowest seq first: heartbeats with
  // seq <= heartbeat_upto and read messages with seq <= read_upto. A pass hands the last
  // batch's last_seq on as after_seq, so no batch walks again over the messages kept below it.
  // It reads the batch's seqs, then deletes them one row at a time, and asks out_of_time (if
  // given) after each seq read and before each row but the first: once it says so, it stops
  // (cut), having deleted at least one, so one slow batch cannot hold the loop long.
  Deleted DeleteMessages(int64_t heartbeat_upto, int64_t read_upto, int64_t after_seq, int limit,
                         const std::function<bool()>& out_of_time = {});

  struct DispatchAge {
    int64_t id = 0, finished_ms = 0;  // finished_ms 0: not finished
  };
  // Dispatches with id > after_id, in id order.
  std::vector<DispatchAge> DispatchesAfter(int64_t after_id, int limit);

 private:
  Database& db_;
};

}  // namespace conclave::store
