// SpawnJournal: which process each started dispatch runs as, written the moment it is spawned,
// so recovery can find and stop it even when the daemon dies before that pid reaches the
// store. One line per spawn ("<dispatch id> <pid> <start time>\n") appended with a single
// write() to STATE_DIR/spawned.journal — no commit, no fsync: the page cache survives the
// daemon's crash, and the machine's crash takes the workers with it. The store gets the pid
// later in a regular group commit (RunSupervisor). Once every journaled run is either in the
// store or finished, the journal may be emptied; it is, once it holds compact_at bytes (64 KiB,
// 1,000-3,000 lines; an earlier daemon's lines count): a truncate per run cost the loop ~11 µs
// on ext4, ten times the line's write, and recovery ignores the lines left over. A writer's
// line also carries the commit its work starts from ("<id> <pid> <start time> <sha>"): a
// resumed attempt needs it. Entries are only hints: recovery acts on one only for a dispatch
// the store still has running, and only while /proc shows that very
// process (pid + start time).
// Thread-safety: an instance on the loop thread only; ReadSpawnJournal is a pure file read.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

namespace conclave::exec {

struct SpawnRecord {
  pid_t pid = 0;
  int64_t start_time = 0;  // /proc/<pid>/stat starttime
  std::string start_head;  // lower-case hex commit, "" when none
};

std::string SpawnJournalPath(const std::string& state_dir);

// The journal's entries by dispatch id (the last one wins); malformed lines are skipped.
std::map<int64_t, SpawnRecord> ReadSpawnJournal(const std::string& path);

class SpawnJournal {
 public:
  static constexpr int64_t kCompactAt = 64 << 10;
  explicit SpawnJournal(std::string path, int64_t compact_at = kCompactAt)
      : path_(std::move(path)), compact_at_(compact_at) {}
  ~SpawnJournal();
  SpawnJournal(const SpawnJournal&) = delete;
  SpawnJournal& operator=(const SpawnJournal&) = delete;

  // Appends one entry (opens the file on first use). False when it could not be written.
  bool Record(int64_t dispatch_id, const SpawnRecord& r);
  // True once the journal holds compact_at bytes (what earlier daemons left counts from this
  // instance's first write on).
  bool full() const { return bytes_ >= compact_at_; }
  // Empties the journal when full(); the caller knows every entry is redundant.
  void Compact();
  int64_t bytes() const { return bytes_; }
  void set_compact_at(int64_t bytes) { compact_at_ = bytes; }

 private:
  std::string path_;
  int fd_ = -1;
  int64_t compact_at_;
  int64_t bytes_ = 0;  // the file's size since this instance opened it
};

}  // namespace conclave::exec
