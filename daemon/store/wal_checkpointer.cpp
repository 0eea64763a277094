#include "store/wal_checkpointer.h"

#include <chrono>

#include "common/thread_name.h"
#include "store/database.h"
#include "store/wal_write_vfs.h"

namespace conclave::store {
namespace {
// A checkpoint that could not copy every frame (the writer appended meanwhile) is retried a
// few times with a short pause, so a burst leaves no large WAL behind.
constexpr int kRetries = 8;
constexpr auto kRetryPause = std::chrono::milliseconds(20);
}  // namespace

WalCheckpointer::WalCheckpointer(const std::string& path, bool synchronous_full,
                                 int threshold_pages, std::chrono::milliseconds pace)
    : threshold_(threshold_pages), pace_(pace) {
  int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                           WalWriteVfsName());
  if (rc != SQLITE_OK) {
    std::string msg = "cannot open the checkpoint connection to " + path + ": " +
                      (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(rc, msg);
  }
  // The checkpoint's syncs follow this connection's level: the same as the writer's.
  const char* sync = synchronous_full ? "PRAGMA synchronous=FULL;" : "PRAGMA synchronous=NORMAL;";
  rc = sqlite3_exec(db_, sync, nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_exec(db_, "PRAGMA wal_autocheckpoint=0;", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = std::string("checkpoint connection: ") + sqlite3_errmsg(db_);
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(rc, msg);
  }
  thread_ = std::thread([this] { Run(); });
  NameThread(thread_, "checkpointer");
}

WalCheckpointer::~WalCheckpointer() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  sqlite3_close_v2(db_);
}

void WalCheckpointer::NoteWalPages(int pages) {
  if (threshold_ <= 0 || pages < threshold_) return;
  if (requested_.exchange(true, std::memory_order_acq_rel)) return;  // already asked
  // The mutex orders this wake-up after the thread's check of requested_: none is lost.
  { std::lock_guard<std::mutex> lk(mu_); }
  cv_.notify_one();
}

bool WalCheckpointer::CheckpointOnce() {
  int log = -1, copied = -1;
  int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
  if (rc != SQLITE_OK) return false;  // SQLITE_BUSY etc.: the next request retries
  checkpoints_.fetch_add(1, std::memory_order_relaxed);
  return copied >= log;
}

void WalCheckpointer::Run() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [this] { return stop_ || requested_.load(std::memory_order_acquire); });
    if (stop_) return;
    requested_.store(false, std::memory_order_release);
    lk.unlock();
    for (int i = 0; i < kRetries && !CheckpointOnce(); ++i) {
      lk.lock();
      bool stopping = cv_.wait_for(lk, kRetryPause, [this] { return stop_; });
      lk.unlock();
      if (stopping) break;
    }
    lk.lock();
    // The pace (see the header): requests that come meanwhile wait for the next round.
    if (cv_.wait_for(lk, pace_, [this] { return stop_; })) return;
  }
}

}  // namespace conclave::store
