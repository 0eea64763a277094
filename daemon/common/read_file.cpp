#include "common/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace conclave {

bool ReadFileInto(const char* path, std::string* out, size_t max_bytes, int extra_flags) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | extra_flags);
  if (fd < 0) return false;
  char buf[65536];
  size_t got = 0;
  while (got < max_bytes) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out->append(buf, static_cast<size_t>(n));
    got += static_cast<size_t>(n);
  }
  close(fd);
  return true;
}

bool ReadRegularFile(const char* path, std::string* out, size_t max_bytes, int extra_flags) {
  // O_NOCTTY: a link to a free terminal never becomes a session leader's controlling tty.
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | extra_flags);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  std::string text;
  if (ok) {
    char buf[65536];
    for (size_t got = 0; got < max_bytes;) {
      ssize_t n = read(fd, buf, std::min(sizeof buf, max_bytes - got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) ok = false;
      if (n <= 0) break;
      text.append(buf, static_cast<size_t>(n));
      got += static_cast<size_t>(n);
    }
  }
  close(fd);
  if (ok) out->append(text);  // nothing of a failed read
  return ok;
}

bool ReadFirstLine(const char* path, std::string* line, size_t max_bytes, int extra_flags) {
  std::string text;
  // One byte more than a line may hold: a first line longer than that is refused, not cut.
  if (!ReadRegularFile(path, &text, max_bytes == SIZE_MAX ? max_bytes : max_bytes + 1,
                       extra_flags)) {
    return false;
  }
  size_t end = text.find('\n');
  if (end == std::string::npos && text.size() > max_bytes) return false;
  if (end != std::string::npos) text.resize(end);
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
  *line = std::move(text);
  return true;
}

}  // namespace conclave
