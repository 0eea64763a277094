#include "exec/output_sink.h"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

namespace conclave::exec {

OutputSink::OutputSink(std::string transcript_path, std::string stdout_path, int64_t cap_bytes)
    : transcript_path_(std::move(transcript_path)),
      stdout_path_(std::move(stdout_path)),
      cap_bytes_(cap_bytes) {}

void OutputSink::OpenFiles() {
  if (files_opened_) return;
  files_opened_ = true;
  // The dispatch directory exists already when the plan needed it before the spawn.
  std::string dir = std::filesystem::path(transcript_path_).parent_path();
  if (mkdir(dir.c_str(), 0700) != 0 && errno == ENOENT) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec);
    mkdir(dir.c_str(), 0700);
  }
  transcript_.Open(transcript_path_, cap_bytes_);
  stdout_log_.Open(stdout_path_, cap_bytes_);
}

void OutputSink::Store(bool is_stdout, std::string_view clean) {
  if (clean.empty()) return;
  OpenFiles();
  transcript_.Append(clean);
  if (is_stdout) stdout_log_.Append(clean);
}

void OutputSink::Close() {
  transcript_.Close();
  stdout_log_.Close();
}

}  // namespace conclave::exec
