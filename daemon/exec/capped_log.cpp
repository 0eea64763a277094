#include "exec/capped_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

namespace conclave::exec {
namespace {

void WriteAll(int fd, std::string_view data) {
  while (!data.empty() && fd >= 0) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // disk full or similar: best effort, the run goes on
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// Never follows a link, never waits on a FIFO: only a regular file is opened (-1 otherwise).
int OpenAppend(const std::string& path, bool truncate) {
  int fd = open(path.c_str(),
                O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
                    (truncate ? O_TRUNC : O_APPEND),
                0600);
  struct stat st {};
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    close(fd);
    errno = EINVAL;  // not a regular file
    return -1;
  }
  return fd;
}

// A tail segment to read back: a regular file of this user with one name — not a link (a
// sandboxed worker can create files in its dispatch directory, and a link there would fold a
// file hidden from it into its own output) nor a FIFO (which would block the reader forever).
// -1 otherwise.
int OpenSegment(const std::string& path, int64_t* size) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return -1;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
      st.st_uid != geteuid()) {
    close(fd);
    return -1;
  }
  *size = static_cast<int64_t>(st.st_size);
  return fd;
}

}  // namespace

std::string TailSegmentPath(const std::string& path, int64_t n) {
  return path + ".tail." + std::to_string(n);
}

CappedLog::~CappedLog() { Close(); }

bool CappedLog::Open(const std::string& path, int64_t cap_bytes) {
  Close();
  path_ = path;
  cap_ = cap_bytes > 0 ? std::max<int64_t>(cap_bytes, 4096) : 0;
  head_limit_ = cap_ / 2;
  segment_limit_ = cap_ / 4;
  fd_ = OpenAppend(path, false);
  if (fd_ >= 0) head_ = lseek(fd_, 0, SEEK_END);  // a re-opened log goes on after its head
  if (head_ < 0) head_ = 0;
  total_ = head_;
  return fd_ >= 0;
}

void CappedLog::Append(std::string_view data) {
  total_ += static_cast<int64_t>(data.size());
  if (cap_ == 0 || head_ < head_limit_) {
    size_t n = cap_ == 0 ? data.size()
                         : std::min<size_t>(data.size(), static_cast<size_t>(head_limit_ - head_));
    WriteAll(fd_, data.substr(0, n));
    head_ += static_cast<int64_t>(n);
    data.remove_prefix(n);
  }
  if (!data.empty()) AppendTail(data);
}

void CappedLog::AppendTail(std::string_view data) {
  while (!data.empty()) {
    if (tail_fd_ < 0 || segment_bytes_ >= segment_limit_) {
      if (tail_fd_ >= 0) close(tail_fd_);
      ++segment_;
      // Only the newest two segments are kept: the one before the previous goes.
      if (segment_ >= 2) unlink(TailSegmentPath(path_, segment_ - 2).c_str());
      tail_fd_ = OpenAppend(TailSegmentPath(path_, segment_), true);
      segment_bytes_ = 0;
    }
    size_t n = std::min<size_t>(data.size(), static_cast<size_t>(segment_limit_ - segment_bytes_));
    WriteAll(tail_fd_, data.substr(0, n));
    segment_bytes_ += static_cast<int64_t>(n);
    data.remove_prefix(n);
  }
}

void CappedLog::Close() {
  if (fd_ >= 0) close(fd_);
  if (tail_fd_ >= 0) close(tail_fd_);
  fd_ = tail_fd_ = -1;
}

Status StitchCappedLog(const std::string& path, int64_t cap_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(path);
  const std::string prefix = p.filename().string() + ".tail.";
  // Only the two highest-numbered names can be the log's own segments (it keeps its last two):
  // every other name of the form PATH.tail.<digits> is removed unread as the directory is
  // read, so however many a worker planted, two are kept in memory and at most two opened.
  cap_bytes = std::max<int64_t>(cap_bytes, 4096);
  const int64_t segment_limit = cap_bytes / 4;
  std::map<int64_t, fs::path> segments;
  size_t refused = 0;
  auto drop = [&](const fs::path& f) {
    std::error_code rm;  // a name that cannot be removed does not end the directory's reading
    fs::remove(f, rm);
    ++refused;
  };
  fs::directory_iterator it(p.parent_path(), ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& e = *it;
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    // The log writes numbers as std::to_string does, and never one this large.
    if (digits.size() > 12 || (digits.size() > 1 && digits[0] == '0')) {
      drop(e.path());
      continue;
    }
    int64_t n = 0;
    for (char c : digits) n = n * 10 + (c - '0');
    if (n > INT64_MAX / segment_limit) {  // its cut would not fit in the marker's figure
      drop(e.path());
      continue;
    }
    segments[n] = e.path();
    if (segments.size() > 2) {
      drop(segments.begin()->second);
      segments.erase(segments.begin());
    }
  }
  // Each kept one must be a plain file of this user with one name; its last segment_limit
  // bytes at most are read back.
  std::vector<std::pair<int64_t, int>> kept_segments;  // (number, fd)
  int64_t kept = 0;
  for (const auto& [n, seg] : segments) {
    int64_t size = 0;
    int in = OpenSegment(seg.string(), &size);
    if (in < 0) {
      ++refused;
      continue;
    }
    if (size > segment_limit) lseek(in, size - segment_limit, SEEK_SET);
    kept_segments.emplace_back(n, in);
    kept += std::min(size, segment_limit);
  }
  if (refused > 0) {
    spdlog::warn("{}: {} file(s) named like its tail segments are not ones it wrote (more than "
                 "two, a number it never writes, a link, a FIFO, another name or owner): "
                 "removed unread",
                 path, refused);
  }
  if (kept_segments.empty()) {  // nothing of the log's own to put back
    for (const auto& [n, seg] : segments) fs::remove(seg, ec);
    return Status::Ok();
  }
  // Segments before the first kept one were full when they were dropped.
  const int64_t cut = kept_segments.front().first * segment_limit;
  int fd = OpenAppend(path, false);
  if (fd < 0) {
    for (const auto& [n, in] : kept_segments) close(in);
    return Internal("open " + path + ": " + std::strerror(errno));
  }
  int64_t head = lseek(fd, 0, SEEK_END);
  if (cut > 0) {
    WriteAll(fd, "\n[conclave: " + std::to_string(cut) +
                     " bytes of output cut here; the log keeps its first " + std::to_string(head) +
                     " and last " + std::to_string(kept) + " bytes (cap " +
                     std::to_string(cap_bytes) + ")]\n");
  }
  for (const auto& [n, in] : kept_segments) {
    char buf[65536];
    int64_t left = segment_limit;
    for (ssize_t r; left > 0 && (r = read(in, buf, std::min<int64_t>(left, sizeof buf))) > 0;) {
      WriteAll(fd, std::string_view(buf, static_cast<size_t>(r)));
      left -= r;
    }
    close(in);
  }
  close(fd);
  for (const auto& [n, seg] : segments) fs::remove(seg, ec);
  return Status::Ok();
}

}  // namespace conclave::exec
