#include "exec/run_logs.h"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

namespace conclave::exec {

void RunLogs::Write(const std::string& data, bool is_stdout) {
  if (!opened) Open();
  transcript.Append(data);
  if (is_stdout) stdout_log.Append(data);
}

void RunLogs::Open() {
  opened = true;
  // The dispatch directory exists already when the plan needed it before the spawn.
  std::string dir = std::filesystem::path(transcript_path).parent_path();
  if (mkdir(dir.c_str(), 0700) != 0 && errno == ENOENT) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec);
    mkdir(dir.c_str(), 0700);
  }
  transcript.Open(transcript_path, cap);
  stdout_log.Open(stdout_path, cap);
}

void RunLogs::Close() {
  transcript.Close();
  stdout_log.Close();
}

}  // namespace conclave::exec
