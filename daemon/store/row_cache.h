// RowCache: the rows a store read last, by key, so that a row read again a few statements
// later costs no statement (one dispatch reads its task, terminal and dispatch rows up to six
// times each, across the components that handle it).
// Exact by construction:
//  - a row enters only as read from the connection (Put after a SELECT);
//  - a store write that succeeded changes the cached row exactly as its SQL changed the table
//    (the store does that after the statement ran; a failed statement throws first);
//  - whatever may undo a write on the connection — ROLLBACK, ROLLBACK TO, any SQL run through
//    Database::Exec — moves Database::undo_count(), and the cache empties at its next use.
// Only the stores write their tables: no trigger or foreign key changes a cached row.
// Small and oldest-out; rows heavier than kMaxRowBytes are not kept. Used only on the thread
// that uses its connection (the loop; SnapshotReader's thread for the stores it makes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "store/database.h"

namespace conclave::store {

// A REAL as SQLite stores it: -0.0 comes back as 0.0 (it is kept as the integer 0).
inline double AsStored(double v) { return v == 0 ? 0.0 : v; }

template <typename Key, typename Row>
class RowCache {
 public:
  static constexpr size_t kCapacity = 16;
  static constexpr size_t kMaxRowBytes = 64 * 1024;

  explicit RowCache(const Database& db) : db_(db), seen_(db.undo_count()) {}
  // One cache per store per connection: a copy (of a store) would keep rows the other's writes
  // change.
  RowCache(const RowCache&) = delete;
  RowCache& operator=(const RowCache&) = delete;

  // The cached row for key, or null.
  Row* Find(const Key& key) {
    Sync();
    for (auto& [k, row] : rows_) {
      if (k == key) return &row;
    }
    return nullptr;
  }

  // Keeps row (as read from the connection) under key; row_bytes is its text's size.
  void Put(const Key& key, const Row& row, size_t row_bytes) {
    Erase(key);
    if (row_bytes > kMaxRowBytes) return;
    if (rows_.size() == kCapacity) rows_.erase(rows_.begin());
    rows_.emplace_back(key, row);
  }

  void Erase(const Key& key) {
    Sync();
    for (auto it = rows_.begin(); it != rows_.end(); ++it) {
      if (it->first == key) {
        rows_.erase(it);
        return;
      }
    }
  }

  size_t size() const { return rows_.size(); }

 private:
  void Sync() {
    if (seen_ == db_.undo_count()) return;
    rows_.clear();
    seen_ = db_.undo_count();
  }

  const Database& db_;
  uint64_t seen_;
  std::vector<std::pair<Key, Row>> rows_;  // oldest first
};

}  // namespace conclave::store
