// SnapshotReader: reads that walk history (the report's every dispatch, review and flow since
// a date) run here, on a thread and SQLite connection of their own, instead of on the loop. A
// walk over a long history took the loop for hundreds of milliseconds (200k dispatches: about
// 0.3 s), and every Wait, Send and worker's completion waited behind it.
// Each read runs inside one read transaction on a query-only connection (store::Database's
// query_only), begun with a first read before the work starts, so the work sees one committed
// state of the store however long it takes, and the loop's writes go on meanwhile (WAL). Reads
// run one at a time, in the order asked for; the result comes back to the loop. After a read
// that failed in the store, the connection is closed and the next read opens a new one (no
// transaction outlives its read); after every read its page cache is let go.
// A database with no file (":memory:" in a test) has no second connection: its reads run on
// the loop's own connection, in a later turn of the loop.
// Thread-safety: Read() from the loop thread; `work` runs on the reader's thread and must
// touch nothing the loop owns (it gets the reader's own connection); `then` runs on the loop.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "common/loop_kick.h"
#include "store/database.h"

namespace conclave::service {

class SnapshotReader {
 public:
  SnapshotReader(boost::asio::io_context& io, store::Database& loop_db);
  // Interrupts the statement of a read in progress if one is running at that moment (the read
  // then fails; otherwise the read runs to its end), fails the reads still queued, and waits
  // for the thread. Their `then` is still posted to the loop.
  ~SnapshotReader();
  SnapshotReader(const SnapshotReader&) = delete;
  SnapshotReader& operator=(const SnapshotReader&) = delete;

  template <typename T>
  void Read(std::function<T(store::Database&)> work, std::function<void(StatusOr<T>)> then);

  // Reads finished on the reader's own connection, and connections it opened (tests).
  int64_t reads_off_loop() const;
  int64_t connections_opened() const;
  // Test-only: runs inside each read's transaction, after its first read and before its work,
  // on the thread that runs it (a test holds a read there to show the loop going on).
  void SetBeforeWorkForTest(std::function<void()> hook) { before_work_ = std::move(hook); }

 private:
  bool HasFile() const;
  // The reader's connection, opened on first use (on the reader's thread). Throws StoreError.
  store::Database& Connection();
  // After a read: its cache let go; after a store error, the connection closed.
  void AfterRead(bool store_failed);
  // Runs work in one read transaction on db (own: begun and ended here; otherwise the work
  // reads inside the transaction db has open). A StoreError or other exception becomes a
  // status; *store_failed says which.
  template <typename T>
  StatusOr<T> InSnapshot(store::Database& db, bool own,
                         const std::function<T(store::Database&)>& work, bool* store_failed);

  boost::asio::io_context& io_;
  store::Database& loop_db_;
  mutable std::mutex mu_;                // guards db_ (the destructor interrupts it), the count
  std::unique_ptr<store::Database> db_;  // and stopping_; db_ is used on the reader's thread
  int64_t reads_off_loop_ = 0, connections_opened_ = 0;
  bool stopping_ = false;
  std::function<void()> before_work_;  // set before the first read, then only read
  boost::asio::thread_pool pool_{1};   // last: joined before the connection goes
};

template <typename T>
StatusOr<T> SnapshotReader::InSnapshot(store::Database& db, bool own,
                                       const std::function<T(store::Database&)>& work,
                                       bool* store_failed) {
  *store_failed = false;
  try {
    if (own) {
      db.BeginRead();
      db.Prepare("SELECT 1 FROM sqlite_schema LIMIT 1").Step();  // the snapshot starts here
    }
    try {
      if (before_work_) before_work_();
      T out = work(db);
      if (own) db.Commit();
      return out;
    } catch (...) {
      try {
        if (own && db.InTransaction()) db.Rollback();
      } catch (const store::StoreError&) {
        *store_failed = true;  // the reader's connection is closed after this read
      }
      throw;  // the work's own error, not the rollback's
    }
  } catch (const store::StoreError& e) {
    *store_failed = true;
    return Unavailable(std::string("store: ") + e.what());
  } catch (const std::exception& e) {
    return Internal(std::string("internal error: ") + e.what());
  } catch (...) {
    return Internal("internal error: an exception of unknown type");
  }
}

template <typename T>
void SnapshotReader::Read(std::function<T(store::Database&)> work,
                          std::function<void(StatusOr<T>)> then) {
  if (!HasFile()) {
    PostToLoop(io_, [this, work = std::move(work), then = std::move(then)] {
      // The loop's connection may be inside the batcher's open transaction: then the work
      // reads within it.
      bool store_failed = false;
      then(InSnapshot(loop_db_, !loop_db_.InTransaction(), work, &store_failed));
    });
    return;
  }
  boost::asio::post(pool_, [this, work = std::move(work), then = std::move(then)]() mutable {
    StatusOr<T> out = Unavailable("store: the reader's connection did not open");
    bool store_failed = true;
    try {
      out = InSnapshot(Connection(), true, work, &store_failed);
    } catch (const store::StoreError& e) {
      out = Unavailable(std::string("store: cannot open a reader: ") + e.what());
    } catch (const std::exception& e) {
      out = Internal(std::string("internal error: cannot open a reader: ") + e.what());
    } catch (...) {
      out = Internal("internal error: cannot open a reader");
    }
    AfterRead(store_failed);
    if (out.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      ++reads_off_loop_;
    }
    PostToLoop(io_, [then = std::move(then), out = std::move(out)]() mutable {
      then(std::move(out));
    });
  });
}

}  // namespace conclave::service
