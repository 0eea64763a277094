#include "exec/log_writer.h"

#include <pthread.h>
#include <unistd.h>

#include <exception>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/thread_name.h"
#include "exec/child_process.h"

namespace conclave::exec {

LogWriter::LogWriter() : thread_([this] { ThreadMain(); }) { NameThread(thread_, "log-writer"); }

LogWriter::~LogWriter() { Close(); }

void LogWriter::Post(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    if (!exited_) {
      queue_.push_back(std::move(job));
      if (queue_.size() == 1) wake_.notify_one();  // else it is awake, or woken already
      return;
    }
  }
  RunJob(job);  // the thread is gone: the caller writes
}

void LogWriter::Close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  wake_.notify_one();
  std::lock_guard join(join_mu_);
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void LogWriter::RunJob(std::function<void()>& job) {
  try {
    job();
  } catch (const std::exception& e) {
    spdlog::error("log writer: a write failed: {}", e.what());
  } catch (...) {
    spdlog::error("log writer: a write failed");
  }
  job = nullptr;  // what it holds goes here, not under the lock
}

void LogWriter::ThreadMain() {
  NiceThisThreadAsChildren();
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return closed_ || !queue_.empty(); });
    if (queue_.empty()) {  // closed, and everything posted before is done
      exited_ = true;
      return;
    }
    std::function<void()> job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    RunJob(job);
    lock.lock();
  }
}

}  // namespace conclave::exec
