// Unit tests: the crash-loop guard (domain/crash_loop).
#include <catch2/catch.hpp>

#include "domain/crash_loop.h"

namespace conclave::domain {
namespace {

constexpr int64_t kWindow = 120000;

Dispatch Running(int64_t id, int64_t started_ms) {
  Dispatch d;
  d.id = id;
  d.state = DispatchState::kRunning;
  d.started_ms = started_ms;
  return d;
}

// A dispatch recovery found running after an unclean death, `lived_ms` after its start.
Dispatch Died(int64_t id, int64_t started_ms, int64_t lived_ms) {
  Dispatch d = Running(id, started_ms);
  d.state = DispatchState::kInterrupted;
  d.failure_kind = "interrupted";
  d.evidence = std::string(kDaemonDiedEvidence);
  d.finished_ms = started_ms + lived_ms;
  return d;
}

TEST_CASE("three unclean deaths soon after the start are a crash loop, two are not",
          "[crash_loop]") {
  std::vector<Dispatch> earlier = {Died(1, 1000, 5000), Died(2, 10000, 4000)};
  CHECK(IsCrashLoop(earlier, Running(3, 20000), 26000, kWindow));
  CHECK_FALSE(IsCrashLoop({earlier[1]}, Running(3, 20000), 26000, kWindow));
  CHECK_FALSE(IsCrashLoop({}, Running(3, 20000), 26000, kWindow));
}

TEST_CASE("a death long after the start does not count and breaks the chain", "[crash_loop]") {
  std::vector<Dispatch> earlier = {Died(1, 1000, 5000), Died(2, 10000, 4000)};
  // The current run lived past the window: the daemon's death is not tied to its start.
  CHECK_FALSE(IsCrashLoop(earlier, Running(3, 20000), 20000 + kWindow + 1, kWindow));
  // An earlier run that lived long breaks the chain.
  std::vector<Dispatch> long_lived = {Died(1, 1000, 5000), Died(2, 10000, kWindow + 1)};
  CHECK_FALSE(IsCrashLoop(long_lived, Running(3, 300000), 301000, kWindow));
}

TEST_CASE("clean shutdowns and other outcomes never count", "[crash_loop]") {
  Dispatch shutdown = Died(2, 10000, 4000);
  shutdown.evidence = "daemon shut down during the run";
  CHECK_FALSE(IsCrashLoop({Died(1, 1000, 5000), shutdown}, Running(3, 20000), 21000, kWindow));
  Dispatch failed = Died(2, 10000, 4000);
  failed.state = DispatchState::kFailed;
  failed.failure_kind = "timeout";
  CHECK_FALSE(IsCrashLoop({Died(1, 1000, 5000), failed}, Running(3, 20000), 21000, kWindow));
  // Older deaths before a clean run do not join the chain.
  std::vector<Dispatch> mixed = {Died(1, 1000, 5000), Died(2, 8000, 1000), shutdown,
                                 Died(4, 30000, 1000)};
  CHECK_FALSE(IsCrashLoop(mixed, Running(5, 40000), 41000, kWindow));
  // A dispatch never started (started_ms 0) is not judged.
  CHECK_FALSE(IsCrashLoop({Died(1, 1000, 5000), Died(2, 10000, 4000)}, Running(3, 0), 1000,
                          kWindow));
}

TEST_CASE("the current dispatch listed among the task's dispatches is skipped", "[crash_loop]") {
  std::vector<Dispatch> all = {Died(1, 1000, 5000), Died(2, 10000, 4000), Running(3, 20000)};
  CHECK(IsCrashLoop(all, all.back(), 22000, kWindow));
}

}  // namespace
}  // namespace conclave::domain
