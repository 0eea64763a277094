// OutputSink: a worker run's output files — the transcript (stdout and stderr interleaved as
// they arrive) and stdout.log (stdout alone), each a CappedLog. The files (and the dispatch
// directory, if missing) are made with the first byte stored: a silent run creates none.
// Thread-safety: one thread at a time. In the daemon a WorkerRun redacts on the loop and
// hands the bytes to a single writer thread that drives the sink, so bulk output costs the
// loop no file writes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "exec/capped_log.h"

namespace conclave::exec {

class OutputSink {
 public:
  OutputSink(std::string transcript_path, std::string stdout_path, int64_t cap_bytes);
  // Appends already redacted bytes of one stream. Nothing happens for an empty chunk.
  void Store(bool is_stdout, std::string_view clean);
  void Close();

 private:
  void OpenFiles();

  std::string transcript_path_, stdout_path_;
  int64_t cap_bytes_;
  bool files_opened_ = false;
  CappedLog transcript_, stdout_log_;
};

}  // namespace conclave::exec
