#include "common/read_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
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

namespace {

// Reads up to max_bytes of fd when it is a regular file; closes fd. On failure nothing is
// appended.
bool ReadRegularFd(int fd, std::string* out, size_t max_bytes) {
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

// "line" is the first line of text; false when text holds more than max_bytes without a line
// end (the line is longer than a caller allows).
bool FirstLineOf(std::string text, size_t max_bytes, std::string* line) {
  size_t end = text.find('\n');
  if (end == std::string::npos && text.size() > max_bytes) return false;
  if (end != std::string::npos) text.resize(end);
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
  *line = std::move(text);
  return true;
}

size_t OneMore(size_t max_bytes) { return max_bytes == SIZE_MAX ? max_bytes : max_bytes + 1; }

}  // namespace

int OpenRegularFile(const char* path, int extra_flags) {
  // O_NOCTTY: a link to a free terminal never becomes a session leader's controlling tty.
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | extra_flags);
  struct stat st {};
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    close(fd);
    return -1;
  }
  return fd;
}

bool ReadRegularFile(const char* path, std::string* out, size_t max_bytes, int extra_flags) {
  return ReadRegularFd(OpenRegularFile(path, extra_flags), out, max_bytes);
}

int OpenBeneathByWalk(int dfd, const std::string& rel) {
  if (rel.empty() || rel[0] == '/') return -1;
  int cur = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
  size_t at = 0;
  while (cur >= 0) {
    size_t slash = rel.find('/', at);
    std::string part = rel.substr(at, slash == std::string::npos ? std::string::npos : slash - at);
    int next = -1;
    if (!part.empty() && part != "." && part != "..") {
      next = slash == std::string::npos
                 ? openat(cur, part.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW)
                 : openat(cur, part.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    }
    const int open_errno = errno;
    close(cur);
    errno = open_errno;
    if (slash == std::string::npos) return next;
    cur = next;
    at = slash + 1;
  }
  return -1;
}

int OpenBeneath(const std::string& dir, const std::string& rel) {
  int dfd = open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (dfd < 0) return -1;
  int fd = -1;
  errno = ENOSYS;
#ifdef SYS_openat2
  struct open_how how {};
  how.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  fd = static_cast<int>(syscall(SYS_openat2, dfd, rel.c_str(), &how, sizeof how));
#endif
  // Without openat2 (a kernel before 5.6, or a seccomp filter refusing it): the same rules, one
  // component at a time.
  if (fd < 0 && (errno == ENOSYS || errno == EPERM)) fd = OpenBeneathByWalk(dfd, rel);
  const int open_errno = errno;  // the caller may tell why it failed (EWOULDBLOCK: a lease)
  close(dfd);
  errno = open_errno;
  return fd;
}

bool ReadRegularFileBeneath(const std::string& dir, const std::string& rel, std::string* out,
                            size_t max_bytes) {
  return ReadRegularFd(OpenBeneath(dir, rel), out, max_bytes);
}

bool ReadFirstLine(const char* path, std::string* line, size_t max_bytes, int extra_flags) {
  std::string text;
  // One byte more than a line may hold: a first line longer than that is refused, not cut.
  return ReadRegularFile(path, &text, OneMore(max_bytes), extra_flags) &&
         FirstLineOf(std::move(text), max_bytes, line);
}

bool ReadFirstLineBeneath(const std::string& dir, const std::string& rel, std::string* line,
                          size_t max_bytes) {
  std::string text;
  return ReadRegularFileBeneath(dir, rel, &text, OneMore(max_bytes)) &&
         FirstLineOf(std::move(text), max_bytes, line);
}

}  // namespace conclave
