// RedactingLogSink: the daemon's log sink. Every formatted line passes through the daemon's
// Redactor before it reaches stderr (the journal under systemd), so evidence quoted from a
// worker's output can never carry a standing secret into the log.
// Thread-safety: spdlog serialises calls through the sink's mutex; the Redactor is immutable.
#pragma once

#include <spdlog/sinks/base_sink.h>

#include <cstdio>
#include <mutex>
#include <string>

#include "exec/redactor.h"

namespace conclave::exec {

class RedactingLogSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit RedactingLogSink(const Redactor* redactor) : redactor_(redactor) {}
  void SetRedactor(const Redactor* redactor) {
    std::lock_guard<std::mutex> lock(mutex_);
    redactor_ = redactor;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    std::string_view line(formatted.data(), formatted.size());
    std::string clean = redactor_ ? redactor_->Apply(line) : std::string(line);
    std::fwrite(clean.data(), 1, clean.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }

 private:
  const Redactor* redactor_;
};

}  // namespace conclave::exec
