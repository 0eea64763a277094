#include "exec/output_sink.h"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

namespace conclave::exec {
namespace {
constexpr size_t kStderrTail = 8192;
}  // namespace

OutputSink::OutputSink(std::string transcript_path, std::string stdout_path,
                       std::vector<std::string> secrets, int64_t cap_bytes)
    : transcript_path_(std::move(transcript_path)),
      stdout_path_(std::move(stdout_path)),
      cap_bytes_(cap_bytes),
      out_redactor_(std::move(secrets)),
      err_redactor_(out_redactor_) {}  // the same forms: computed once

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

void OutputSink::Store(bool is_stdout, const std::string& clean) {
  if (clean.empty()) return;
  OpenFiles();
  transcript_.Append(clean);
  if (is_stdout) {
    stdout_log_.Append(clean);
  } else {
    stderr_tail_ += clean;
    if (stderr_tail_.size() > kStderrTail) {
      stderr_tail_.erase(0, stderr_tail_.size() - kStderrTail);
    }
  }
}

std::string OutputSink::Write(bool is_stdout, std::string_view data) {
  std::string clean = is_stdout ? out_redactor_.Feed(data) : err_redactor_.Feed(data);
  Store(is_stdout, clean);
  return clean;
}

std::string OutputSink::EndStream(bool is_stdout) {
  std::string tail = is_stdout ? out_redactor_.Finish() : err_redactor_.Finish();
  Store(is_stdout, tail);
  return tail;
}

void OutputSink::Close() {
  transcript_.Close();
  stdout_log_.Close();
}

}  // namespace conclave::exec
