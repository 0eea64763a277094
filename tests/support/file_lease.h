// FileLease: a write lease (fcntl F_SETLEASE F_WRLCK) on a file, held until the object is
// destroyed; SIGIO, with which the kernel tells the holder of each break, is ignored, so the
// holder never lets go (the kernel takes the lease away after fs.lease-break-time). An open of
// the file by anyone else waits in the kernel meanwhile, or fails at once with EWOULDBLOCK when
// non-blocking — a real stand-in for a hung filesystem, or for a process that holds a lease.
// LeasesHold() says whether this filesystem grants leases and keeps them long enough for a
// test (tests that need one exit 77, SKIPPED, where it does not).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace conclave::testing {

class FileLease {
 public:
  explicit FileLease(const std::string& path) {
    signal(SIGIO, SIG_IGN);
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ >= 0 && fcntl(fd_, F_SETLEASE, F_WRLCK) != 0) {
      error_ = std::strerror(errno);
      close(fd_);
      fd_ = -1;
    } else if (fd_ < 0) {
      error_ = std::strerror(errno);
    }
  }
  ~FileLease() {
    if (fd_ >= 0) close(fd_);
  }
  FileLease(const FileLease&) = delete;
  FileLease& operator=(const FileLease&) = delete;
  bool held() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

// "" when a lease can be taken under /tmp and is kept at least min_break_s before the kernel
// breaks it on its own; otherwise why not.
inline std::string LeasesHold(int min_break_s) {
  char dir[] = "/tmp/cvlXXXXXX";
  if (mkdtemp(dir) == nullptr) return std::string("mkdtemp: ") + std::strerror(errno);
  std::string probe = std::string(dir) + "/probe";
  std::ofstream(probe) << "x";
  std::string error;
  {
    FileLease lease(probe);
    if (!lease.held()) error = "no file lease here: " + lease.error();
  }
  std::filesystem::remove_all(dir);
  int break_s = 0;
  std::ifstream("/proc/sys/fs/lease-break-time") >> break_s;
  if (error.empty() && break_s < min_break_s) {
    error = "fs.lease-break-time is " + std::to_string(break_s) + " s (under " +
            std::to_string(min_break_s) + ")";
  }
  return error;
}

}  // namespace conclave::testing
