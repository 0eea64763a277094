// OutputSink: what a worker run does with its output bytes — redacts them (one redactor per
// stream) and appends them to the transcript (both streams, interleaved as they arrive) and
// stdout alone to stdout.log, each a CappedLog; keeps the last bytes of stderr for the
// outcome. The files (and the dispatch directory, if missing) are made with the first output
// byte: a silent run creates none.
// Thread-safety: one thread at a time. A WorkerRun drives it from the loop, or — in the daemon
// — from a single writer thread, so bulk output costs the loop only its pipe reads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "exec/capped_log.h"
#include "exec/redactor.h"

namespace conclave::exec {

class OutputSink {
 public:
  OutputSink(std::string transcript_path, std::string stdout_path,
             std::vector<std::string> secrets, int64_t cap_bytes);
  // Redacts and stores a chunk; returns the redacted bytes now released (a secret split
  // across chunks is held back until it is known).
  std::string Write(bool is_stdout, std::string_view data);
  // The stream reached EOF: stores and returns what its redactor held back.
  std::string EndStream(bool is_stdout);
  void Close();
  const std::string& stderr_tail() const { return stderr_tail_; }

 private:
  void OpenFiles();
  void Store(bool is_stdout, const std::string& clean);

  std::string transcript_path_, stdout_path_;
  int64_t cap_bytes_;
  StreamRedactor out_redactor_, err_redactor_;
  bool files_opened_ = false;
  CappedLog transcript_, stdout_log_;
  std::string stderr_tail_;
};

}  // namespace conclave::exec
