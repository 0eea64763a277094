// WalCheckpointer: folds the WAL back into the database file from a background thread on its
// own SQLite connection, so the loop thread's COMMIT never runs a checkpoint (and its fsyncs).
// The owning Database turns SQLite's automatic checkpoint off and reports the WAL's size after
// each commit through NoteWalPages() (called on the loop thread from sqlite3_wal_hook; cheap:
// an atomic store, and a wake-up only when the WAL crosses the threshold).
// Checkpoints are PASSIVE: they never block the writer or readers and never wait on a lock.
// Rounds are paced: the next starts no sooner than `pace` after the last one ended. Under a
// steady stream of commits the WAL cannot restart (the writer appends while a round copies),
// so it stays past the threshold and every commit asks again; unpaced, the thread ran a round
// (two fsyncs) after nearly every commit — 111-208 fsyncs a second, and ~17% of the daemon's CPU
// with one client sending. Paced, what a round copies is each hot page once, and once the
// writes stop the next round folds everything and the next write restarts the WAL.
// Durability is unchanged: a commit is in the WAL before it is acknowledged, exactly as with
// SQLite's own checkpoint; the checkpoint syncs the WAL before copying and the database after
// (the connection uses the same synchronous level as the writer).
// Thread-safety: NoteWalPages() from any one thread; everything else from the owner.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace conclave::store {

class WalCheckpointer {
 public:
  // Opens a second connection to path. Throws StoreError when it cannot.
  WalCheckpointer(const std::string& path, bool synchronous_full, int threshold_pages,
                  std::chrono::milliseconds pace);
  // Stops the thread (finishing a checkpoint in progress) and closes the connection.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // The WAL now holds pages pages (after a commit). Wakes the thread past the threshold.
  void NoteWalPages(int pages);

  int64_t checkpoints() const { return checkpoints_.load(std::memory_order_relaxed); }

 private:
  void Run();
  // One passive checkpoint; true when every WAL frame is now in the database file.
  bool CheckpointOnce();

  sqlite3* db_ = nullptr;
  const int threshold_;
  const std::chrono::milliseconds pace_;
  std::atomic<bool> requested_{false};
  std::atomic<int64_t> checkpoints_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace conclave::store
