#include "exec/spawn_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <string_view>

#include "common/read_file.h"

namespace conclave::exec {
namespace {

template <typename T>
bool Parse(std::string_view& line, T* out) {
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), *out);
  if (ec != std::errc() || end == line.data()) return false;
  line.remove_prefix(static_cast<size_t>(end - line.data()));
  return true;
}

bool IsHex(std::string_view s) {
  return !s.empty() && s.size() <= 64 && s.find_first_not_of("0123456789abcdef") == s.npos;
}

}  // namespace

std::string SpawnJournalPath(const std::string& state_dir) {
  return state_dir + "/spawned.journal";
}

std::map<int64_t, SpawnRecord> ReadSpawnJournal(const std::string& path) {
  std::map<int64_t, SpawnRecord> out;
  std::string text;
  if (!ReadFileInto(path.c_str(), &text, SIZE_MAX, O_NOFOLLOW)) return out;
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) break;  // a torn last line: never trusted
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    int64_t id = 0;
    SpawnRecord r;
    if (!Parse(line, &id) || !Parse(line, &r.pid) || !Parse(line, &r.start_time) || id <= 0 ||
        r.pid <= 1) {
      continue;
    }
    if (!line.empty()) {
      if (line.front() != ' ') continue;
      line.remove_prefix(1);
      if (!IsHex(line)) continue;
      r.start_head = std::string(line);
    }
    out[id] = r;
  }
  return out;
}

SpawnJournal::~SpawnJournal() {
  if (fd_ >= 0) close(fd_);
}

bool SpawnJournal::Record(int64_t dispatch_id, const SpawnRecord& r) {
  if (fd_ < 0) {
    fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0) return false;
    // Lines an earlier daemon left count too: recovery has read them by now, and a daemon
    // restarted more often than it fills the journal must still empty it.
    struct stat st {};
    if (fstat(fd_, &st) == 0) bytes_ = st.st_size;
  }
  const bool head = IsHex(r.start_head);
  char line[160];
  int n = std::snprintf(line, sizeof line, "%lld %d %lld%s%s\n",
                        static_cast<long long>(dispatch_id), static_cast<int>(r.pid),
                        static_cast<long long>(r.start_time), head ? " " : "",
                        head ? r.start_head.c_str() : "");
  if (n <= 0) return false;
  ssize_t w;
  do {
    w = write(fd_, line, static_cast<size_t>(n));
  } while (w < 0 && errno == EINTR);
  if (w != n) return false;  // a short write leaves a torn line, which is never read
  bytes_ += n;
  return true;
}

void SpawnJournal::Compact() {
  if (fd_ < 0 || bytes_ == 0 || !full()) return;
  if (ftruncate(fd_, 0) == 0) bytes_ = 0;
}

}  // namespace conclave::exec
