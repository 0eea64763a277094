#include "common/read_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

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

}  // namespace conclave
