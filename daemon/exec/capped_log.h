// CappedLog: an append-only output file (a dispatch's transcript.log or stdout.log) whose
// size on disk is bounded. Up to cap/2 bytes go to the file itself (the head); past that,
// output goes to tail segments of cap/4 bytes each (PATH.tail.<n>), of which only the last
// two are kept, so what is stored stays under cap however much a worker prints. While the
// tail is being written the file does not grow (a reader's cursor counts stored bytes).
// StitchCappedLog, run off the loop once the writer closed (and by recovery after a crash),
// appends a marker saying how many bytes were cut, then the kept tail, and removes the
// segments: the head and the last ≥ cap/4 bytes survive. cap 0 = unlimited.
// Thread-safety: one CappedLog per writer thread; StitchCappedLog on any thread, after.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace conclave::exec {

class CappedLog {
 public:
  CappedLog() = default;
  CappedLog(const CappedLog&) = delete;
  CappedLog& operator=(const CappedLog&) = delete;
  ~CappedLog();

  // Opens path for appending (created 0600). False when it cannot be opened (then every
  // Append is dropped: the log is best effort, the run goes on).
  bool Open(const std::string& path, int64_t cap_bytes);
  void Append(std::string_view data);
  void Close();

  // Bytes written to the file itself, and in total.
  int64_t head_bytes() const { return head_; }
  int64_t total_bytes() const { return total_; }

 private:
  void AppendTail(std::string_view data);

  std::string path_;
  int64_t cap_ = 0, head_limit_ = 0, segment_limit_ = 0;
  int fd_ = -1, tail_fd_ = -1;
  int64_t head_ = 0, total_ = 0, segment_ = -1, segment_bytes_ = 0;
};

// The name of tail segment n of path.
std::string TailSegmentPath(const std::string& path, int64_t n);

// Folds the kept tail segments of path back into it behind a marker. A no-op (OK) when path
// has no segments. cap_bytes must be the cap the log was written with.
Status StitchCappedLog(const std::string& path, int64_t cap_bytes);

}  // namespace conclave::exec
