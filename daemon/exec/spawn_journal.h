// SpawnJournal: which process each started dispatch runs as, written the moment it is spawned,
// so recovery can find and stop it even when the daemon dies before that pid reaches the
// store. One line per spawn ("<dispatch id> <pid> <start time>\n") appended with a single
// write() to STATE_DIR/spawned.journal — no commit, no fsync: the page cache survives the
// daemon's crash, and the machine's crash takes the workers with it. The store gets the pid
// later in a regular group commit (RunSupervisor); once every journaled run is either in the
// store or finished, the journal is emptied. A writer's line also carries the commit its
// work starts from ("<id> <pid> <start time> <sha>"): a resumed attempt needs it. Entries are only hints: recovery acts on one
// only for a dispatch the store still has running, and only while /proc shows that very
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
  explicit SpawnJournal(std::string path) : path_(std::move(path)) {}
  ~SpawnJournal();
  SpawnJournal(const SpawnJournal&) = delete;
  SpawnJournal& operator=(const SpawnJournal&) = delete;

  // Appends one entry (opens the file on first use). False when it could not be written.
  bool Record(int64_t dispatch_id, const SpawnRecord& r);
  // Empties the journal (every entry is redundant); cheap when already empty.
  void Clear();
  int64_t bytes() const { return bytes_; }

 private:
  std::string path_;
  int fd_ = -1;
  int64_t bytes_ = 0;  // written since the last Clear (by this instance)
};

}  // namespace conclave::exec
