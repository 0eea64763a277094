#include "store/retention_store.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace conclave::store {

int64_t RetentionStore::LastSeqBefore(int64_t cutoff_ms, int64_t last_seq) {
  auto st = db_.Prepare("SELECT seq, created_ms FROM messages WHERE seq >= ? ORDER BY seq LIMIT 1");
  // The first message at or after s: (seq, created_ms), or nothing.
  auto at = [&](int64_t s) -> std::optional<std::pair<int64_t, int64_t>> {
    st.Reset();
    st.Bind(1, s);
    if (!st.Step()) return std::nullopt;
    return std::make_pair(st.Int(0), st.Int(1));
  };
  int64_t lo = 1, hi = last_seq, found = 0;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    auto m = at(mid);
    if (m && m->second < cutoff_ms) {
      found = m->first;
      lo = m->first + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

RetentionStore::Deleted RetentionStore::DeleteMessages(int64_t heartbeat_upto, int64_t read_upto,
                                                       int64_t after_seq, int limit,
                                                       const std::function<bool()>& out_of_time) {
  // The batch's seqs first: a row deleted under a pending SELECT of the same table is not
  // something SQLite defines the SELECT's next rows for.
  auto pick = db_.Prepare(
      "SELECT seq FROM messages WHERE seq > ?5 AND seq <= ?1 "
      "AND ((type = 'heartbeat' AND seq <= ?2) OR (read = 1 AND seq <= ?3)) ORDER BY seq "
      "LIMIT ?4");
  pick.Bind(1, std::max(heartbeat_upto, read_upto)).Bind(2, heartbeat_upto).Bind(3, read_upto);
  pick.Bind(4, limit).Bind(5, after_seq);
  // The walk over rows kept between those due can be long too: it stops at the deadline as well.
  Deleted d;
  std::vector<int64_t> seqs;
  while (pick.Step()) {
    seqs.push_back(pick.Int(0));
    if (out_of_time && out_of_time()) {
      d.cut = true;
      break;
    }
  }
  pick.Reset();
  auto del = db_.Prepare("DELETE FROM messages WHERE seq = ?");
  for (int64_t seq : seqs) {
    if (d.count > 0 && out_of_time && out_of_time()) {
      d.cut = true;
      break;
    }
    del.Reset();
    del.Bind(1, seq);
    del.Run();
    if (db_.Changes() == 0) continue;  // not there (nothing else deletes here, but say so)
    ++d.count;
    d.last_seq = seq;
  }
  return d;
}

std::vector<RetentionStore::DispatchAge> RetentionStore::DispatchesAfter(int64_t after_id,
                                                                        int limit) {
  auto st = db_.Prepare("SELECT id, finished_ms FROM dispatches WHERE id > ? ORDER BY id LIMIT ?");
  st.Bind(1, after_id).Bind(2, limit);
  std::vector<DispatchAge> out;
  while (st.Step()) out.push_back({st.Int(0), st.Int(1)});
  return out;
}

}  // namespace conclave::store
