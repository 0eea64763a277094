// RunLogs: a worker run's two logs on disk, the transcript (stdout and stderr interleaved as they
// arrive) and stdout.log (stdout alone), each capped (exec/capped_log). Opened, with the dispatch
// directory if it is missing, at the first write: a silent run creates no files.
// Thread-safety: used on the log writer's thread only (exec/log_writer).
#pragma once

#include <cstdint>
#include <string>

#include "exec/capped_log.h"

namespace conclave::exec {

struct RunLogs {
  std::string transcript_path, stdout_path;
  int64_t cap = 0;
  bool opened = false;
  CappedLog transcript, stdout_log;

  void Write(const std::string& data, bool is_stdout);
  void Close();

 private:
  void Open();
};

}  // namespace conclave::exec
