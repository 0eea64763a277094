#include "service/activity_watch.h"
#include "common/loop_kick.h"

#include <boost/asio/post.hpp>
#include <algorithm>
#include <vector>

namespace conclave::service {
namespace {
// Sample a few times per window, so activity is seen well before the window ends.
constexpr int64_t kMinStepMs = 100, kMaxStepMs = 15000;
}  // namespace

ActivityWatch::ActivityWatch(Core& core, Listener listener)
    : core_(core), listener_(std::move(listener)) {}

ActivityWatch::~ActivityWatch() {
  *alive_ = false;
  if (alarm_) alarm_->Cancel();
}

bool ActivityWatch::Enabled() const {
  return core_.config.liveness_cpu_ms > 0 || core_.config.liveness_io_bytes > 0;
}

void ActivityWatch::Watch(int64_t dispatch_id, pid_t pid, std::chrono::milliseconds window) {
  if (!Enabled() || window.count() <= 0 || pid <= 0) return;
  watched_[dispatch_id] = Watched{pid, window.count(), std::nullopt};
  Arm();
}

void ActivityWatch::Forget(int64_t dispatch_id) {
  watched_.erase(dispatch_id);
  if (watched_.empty() && alarm_) {
    alarm_->Cancel();
    alarm_.reset();
  }
}

void ActivityWatch::Arm() {
  if (scanning_ || watched_.empty()) return;
  int64_t window = watched_.begin()->second.window_ms;
  for (const auto& [id, w] : watched_) window = std::min(window, w.window_ms);
  int64_t at = core_.clock.NowMs() + std::clamp<int64_t>(window / 4, kMinStepMs, kMaxStepMs);
  if (alarm_ && alarm_at_ms_ <= at) return;  // a scan comes soon enough
  if (alarm_) alarm_->Cancel();
  alarm_at_ms_ = at;
  alarm_ = core_.clock.Schedule(at, [this] {
    alarm_.reset();
    Scan();
  });
}

void ActivityWatch::Scan() {
  if (watched_.empty()) return;
  std::map<int64_t, pid_t> asked;
  std::vector<pid_t> roots;
  for (const auto& [id, w] : watched_) {
    asked[id] = w.pid;
    roots.push_back(w.pid);
  }
  scanning_ = true;
  // The probe scans /proc: the helper pool's work. The answer comes back to the loop.
  boost::asio::post(core_.helpers, [this, &io = core_.io, alive = alive_, asked, roots,
                                    probe = core_.activity] {
    std::vector<exec::TreeActivity> got;
    try {
      got = probe->Sample(roots);
    } catch (const std::exception&) {
      got.clear();  // unknown, all of them
    }
    got.resize(roots.size());
    PostToLoop(io, [this, alive, asked, got] {  // `this` is used only if still alive
      if (!*alive) return;
      scanning_ = false;
      ++scans_;
      OnSamples(asked, got);
      Arm();
    });
  });
}

void ActivityWatch::OnSamples(const std::map<int64_t, pid_t>& asked,
                              const std::vector<exec::TreeActivity>& got) {
  const int64_t cpu_min = core_.config.liveness_cpu_ms;
  const int64_t io_min = core_.config.liveness_io_bytes;
  std::vector<Report> reports;
  size_t i = 0;
  for (const auto& [id, pid] : asked) {
    const exec::TreeActivity& now = got[i++];
    auto it = watched_.find(id);
    if (it == watched_.end() || it->second.pid != pid) continue;  // forgotten meanwhile
    Watched& w = it->second;
    if (!now.known) {
      w.base.reset();
      reports.push_back({id, Signal::kUnknown, 0, 0});
      continue;
    }
    if (!w.base) {
      w.base = now;
      continue;
    }
    // A member that left the tree takes its counters along: restart from the lower figure.
    w.base->cpu_ms = std::min(w.base->cpu_ms, now.cpu_ms);
    w.base->io_bytes = std::min(w.base->io_bytes, now.io_bytes);
    int64_t cpu = now.cpu_ms - w.base->cpu_ms;
    int64_t io = now.io_bytes - w.base->io_bytes;
    if ((cpu_min > 0 && cpu >= cpu_min) || (io_min > 0 && io >= io_min)) {
      w.base = now;
      reports.push_back({id, Signal::kActive, cpu, io});
    }
  }
  for (const auto& r : reports) listener_(r);
}

}  // namespace conclave::service
