// MessageStore: the message log in SQLite. Called only from the service loop thread, inside
// the commit batcher's transaction for writes. Throws StoreError.
#pragma once

#include <optional>
#include <vector>

#include "domain/message.h"
#include "store/database.h"

namespace conclave::store {

class MessageStore {
 public:
  explicit MessageStore(Database& db) : db_(db) {}

  // Inserts the message and sets m.seq. A read one goes in unread and is marked read in a
  // savepoint of its own (migration 0015); on failure the record is left as it was.
  void Insert(domain::MessageRecord& m);
  std::optional<domain::MessageRecord> Get(int64_t seq);

  // Messages with seq > after_seq matching the filter, oldest first. A task id of the filter
  // matches only that task's messages, so 0 (no task) none: the task index holds only tasks'
  // (migration 0016); MessagingService::ValidateFilter refuses it.
  std::vector<domain::MessageRecord> After(const domain::MessageFilter& filter, int64_t after_seq,
                                           int limit);
  // Newest first.
  std::vector<domain::MessageRecord> Newest(const domain::MessageFilter& filter, int limit);
  // Unread for a recipient, oldest first; marks them read unless peek.
  std::vector<domain::MessageRecord> TakeUnread(const std::string& handle,
                                                const std::vector<std::string>& types, int limit,
                                                bool peek);
  int64_t LastSeq();
  // The rows and the unread rows, from the highest seq given and the counters of rows gone
  // and rows read (migration 0014): no count of rows, no counter written per insert. This
  // holds while every row takes the next seq: nothing inserts a seq of its own, and a
  // migration that rebuilds the table must set messages_gone again.
  struct Counts {
    int64_t rows = 0, unread = 0;
  };
  Counts CountRows();  // one statement
  int64_t Count() { return CountRows().rows; }
  int64_t CountUnread() { return CountRows().unread; }

 private:
  void InsertRead(domain::MessageRecord& m);
  // Entries a filter with a recipient and a sender may have to walk: at most this many are
  // counted on each side before the query picks the smaller.
  static constexpr int64_t kSideProbe = 128;
  // The filter's recipient's (or sender's) entries after after_seq, counted up to at_most.
  int64_t SideEntries(const domain::MessageFilter& f, bool sender, int64_t after_seq,
                      int64_t at_most);
  std::vector<domain::MessageRecord> Query(const domain::MessageFilter& filter,
                                           int64_t after_seq, int limit, bool newest_first);
  Database& db_;
};

}  // namespace conclave::store
