// Contract: see snapshot_reader.h.
#include "service/snapshot_reader.h"

#include "common/thread_name.h"

namespace conclave::service {

SnapshotReader::SnapshotReader(boost::asio::io_context& io, store::Database& loop_db)
    : io_(io), loop_db_(loop_db) {
  NamePoolThreads(pool_, 1, "snapshots");
}

SnapshotReader::~SnapshotReader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;  // reads still queued fail at once
    if (db_) db_->Interrupt();
  }
  pool_.join();
}

bool SnapshotReader::HasFile() const {
  const std::string& path = loop_db_.path();
  return !path.empty() && path != ":memory:" && path.rfind("file::memory:", 0) != 0;
}

store::Database& SnapshotReader::Connection() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) throw store::StoreError(SQLITE_INTERRUPT, "the daemon is stopping");
    if (db_) return *db_;  // only this thread sets or closes it
  }
  // Opened outside the lock: an open may wait out a busy lock, and the destructor must not.
  store::Database::Options options;
  options.query_only = true;
  options.cache_kib = 8192;  // let go after each read (AfterRead)
  auto opened = std::make_unique<store::Database>(loop_db_.path(), options);
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) throw store::StoreError(SQLITE_INTERRUPT, "the daemon is stopping");
  db_ = std::move(opened);
  ++connections_opened_;
  return *db_;
}

void SnapshotReader::AfterRead(bool store_failed) {
  std::unique_ptr<store::Database> closing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!db_) return;
    if (store_failed) {
      closing = std::move(db_);  // no transaction or interrupted state outlives the read
    } else {
      db_->ReleaseMemory();
    }
  }
}

int64_t SnapshotReader::reads_off_loop() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reads_off_loop_;
}

int64_t SnapshotReader::connections_opened() const {
  std::lock_guard<std::mutex> lock(mu_);
  return connections_opened_;
}

}  // namespace conclave::service
