// Unit tests: the real launcher spawns off the loop (exec/launcher). Its spawn executor is
// held by the test, so the launch is caught between Start and the spawn: the loop must run on
// meanwhile, no child may exist yet, and once released the child's pid is the run's.
#include "exec/launcher.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "in_child.h"
#include "io_run_until.h"

using namespace conclave;

namespace {

exec::LaunchPlan TruePlan(const std::string& dir, std::atomic<pid_t>* early) {
  exec::LaunchPlan plan;
  plan.spec.argv = {"/bin/true"};
  plan.spec.env = {"PATH=/usr/bin:/bin"};
  plan.spec.cwd = dir;
  plan.spec.stdin_null = true;
  plan.spec.early_pid = early;
  plan.transcript_path = dir + "/transcript.log";
  plan.stdout_path = dir + "/stdout.log";
  return plan;
}

TEST_CASE("a launch does not wait for its spawn: the loop runs on while the spawn is held",
          "[exec][launch]") {
  char tmpl[] = "/tmp/cv-launch-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  boost::asio::thread_pool spawns(1);
  std::promise<void> gate;
  std::shared_future<void> opened = gate.get_future().share();
  boost::asio::post(spawns, [opened] { opened.wait(); });  // the spawn queues behind this
  std::optional<exec::RunOutcome> finished;
  std::optional<StatusOr<std::shared_ptr<exec::RunHandle>>> launched;
  std::atomic<pid_t> early{0};
  {
    exec::ProcessLauncher launcher(io, spawns.get_executor());
    exec::LaunchPlan plan = TruePlan(dir, &early);
    exec::RunLimits limits;
    limits.hard_timeout = std::chrono::seconds(60);
    exec::RunCallbacks cb;
    cb.on_finished = [&](const exec::RunOutcome& o) { finished = o; };
    launcher.Start(std::move(plan), limits, std::move(cb),
                   [&](StatusOr<std::shared_ptr<exec::RunHandle>> r) { launched = std::move(r); });
    bool loop_ran = false;
    boost::asio::post(io, [&] { loop_ran = true; });
    io.run_one();
    CHECK(loop_ran);
    CHECK(!launched.has_value());
    CHECK(early.load() == 0);  // no child exists: Start did not spawn it
    gate.set_value();
    REQUIRE(RunUntil(io, [&] { return launched.has_value(); }));  // the spawn's return
    REQUIRE(launched->ok());
    CHECK(launched->value()->pid() > 0);
    CHECK(launched->value()->pid() == early.load());
    REQUIRE(RunUntil(io, [&] { return finished.has_value(); }));
    CHECK(finished->exit_code == 0);
  }
  spawns.join();
  std::filesystem::remove_all(dir);
}

TEST_CASE("a spawn the launcher cannot make comes back to the loop as an error, with no child",
          "[exec][launch]") {
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  exec::ProcessLauncher launcher(io);
  exec::LaunchPlan plan;
  plan.spec.argv = {"/"};  // a directory: execve refuses it
  plan.spec.cwd = "/";
  std::atomic<pid_t> early{0};
  plan.spec.early_pid = &early;
  std::optional<StatusOr<std::shared_ptr<exec::RunHandle>>> launched;
  launcher.Start(std::move(plan), exec::RunLimits{}, exec::RunCallbacks{},
                 [&](StatusOr<std::shared_ptr<exec::RunHandle>> r) { launched = std::move(r); });
  REQUIRE(RunUntil(io, [&] { return launched.has_value(); }));
  REQUIRE(!launched->ok());
  CHECK(launched->status().message().find("(execve)") != std::string::npos);
  CHECK(early.load() == 0);  // the failed child was reaped: its number is nobody's now
}

// A run stopped before its spawn began (the plan abandoned), or a launcher closed by shutdown:
// the queued spawn is not made at all, and comes back as an error.
TEST_CASE("a queued spawn is not made once its run is abandoned or the launcher is closed",
          "[exec][launch]") {
  for (bool close : {false, true}) {
    boost::asio::io_context io;
    auto guard = boost::asio::make_work_guard(io);
    boost::asio::thread_pool spawns(1);
    std::promise<void> gate;
    std::shared_future<void> opened = gate.get_future().share();
    boost::asio::post(spawns, [opened] { opened.wait(); });
    std::atomic<pid_t> early{0};
    std::optional<StatusOr<std::shared_ptr<exec::RunHandle>>> launched;
    {
      exec::ProcessLauncher launcher(io, spawns.get_executor());
      exec::LaunchPlan plan = TruePlan("/", &early);
      auto abandoned = plan.abandoned;
      launcher.Start(
          std::move(plan), exec::RunLimits{}, exec::RunCallbacks{},
          [&](StatusOr<std::shared_ptr<exec::RunHandle>> r) { launched = std::move(r); });
      if (close) {
        launcher.Close();
      } else {
        abandoned->store(true);
      }
      gate.set_value();
      REQUIRE(RunUntil(io, [&] { return launched.has_value(); }));
      spawns.join();
    }
    REQUIRE(!launched->ok());
    CHECK(launched->status().message().find(close ? "shutdown" : "stopped") != std::string::npos);
    CHECK(early.load() == 0);  // no child was made
  }
}

// Until cond holds, on another thread's progress; false after a minute (a bound, not a wait).
bool SpinUntil(const std::function<bool()>& cond) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!cond() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  return cond();
}

// The launcher's own thread held in the kernel before any child exists — opening a launch's
// file, a FIFO no one reads, as on a hung filesystem — is replaced: the launch behind it runs,
// and the one given up spawns nothing when its thread comes back.
TEST_CASE("a launcher thread stuck before its child is replaced and the launch behind it runs",
          "[exec][launch]") {
  char tmpl[] = "/tmp/cv-launch-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const std::string fifo = dir + "/hung.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::atomic<pid_t> early1{0}, early2{0};
  std::optional<StatusOr<std::shared_ptr<exec::RunHandle>>> launched1, launched2;
  std::optional<exec::RunOutcome> finished2;
  int reader = -1;
  {
    exec::ProcessLauncher launcher(io);
    // Whatever fails below, the FIFO gets a reader before the launcher's destructor joins
    // its thread (the test would hang otherwise).
    struct Release {
      const std::string& fifo;
      int& reader;
      ~Release() {
        if (reader < 0) reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      }
    } release{fifo, reader};
    exec::LaunchPlan stuck = TruePlan(dir, &early1);
    stuck.files = {{fifo, "x"}};
    auto progress = stuck.progress;
    launcher.Start(std::move(stuck), exec::RunLimits{}, exec::RunCallbacks{},
                   [&](StatusOr<std::shared_ptr<exec::RunHandle>> r) { launched1 = std::move(r); });
    exec::RunLimits limits;
    limits.hard_timeout = std::chrono::seconds(60);
    exec::RunCallbacks cb;
    cb.on_finished = [&](const exec::RunOutcome& o) { finished2 = o; };
    launcher.Start(TruePlan(dir, &early2), limits, std::move(cb),
                   [&](StatusOr<std::shared_ptr<exec::RunHandle>> r) { launched2 = std::move(r); });
    REQUIRE(SpinUntil([&] { return progress->on_thread.load(); }));
    CHECK(launcher.replaced_threads() == 0);
    REQUIRE(launcher.ReplaceStuckThread(*progress));
    CHECK(progress->given_up.load());
    CHECK(launcher.replaced_threads() == 1);
    CHECK_FALSE(launcher.ReplaceStuckThread(*progress));  // the new thread is not on it
    // The launch queued behind it runs on the new thread, while the old one is still held.
    REQUIRE(RunUntil(io, [&] { return launched2.has_value(); }));
    REQUIRE(launched2->ok());
    CHECK(launched2->value()->pid() == early2.load());
    REQUIRE(RunUntil(io, [&] { return finished2.has_value(); }));
    CHECK(finished2->exit_code == 0);
    CHECK(progress->on_thread.load());
    CHECK(!launched1.has_value());
    CHECK(launcher.stuck_threads() == 1);
    // A reader lets the old thread go; it writes the file and ends without spawning.
    reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    REQUIRE(reader >= 0);
    REQUIRE(SpinUntil([&] { return launcher.stuck_threads() == 0; }));  // it has ended
    CHECK(early1.load() == 0);  // no child was made for the launch given up
    char byte = 0;
    CHECK(read(reader, &byte, 1) == 1);
    io.poll();
    CHECK(!launched1.has_value());  // and it is never reported
  }
  if (reader >= 0) close(reader);
  std::filesystem::remove_all(dir);
}

// Each thread left stuck keeps its stacks until the kernel lets it go: past the limit a stuck
// launch is not given up, and the queue waits for it.
TEST_CASE("a launcher leaves at most kMaxStuckThreads threads stuck", "[exec][launch]") {
  char tmpl[] = "/tmp/cv-launch-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  constexpr int kLimit = exec::ProcessLauncher::kMaxStuckThreads;
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::vector<std::string> fifos;
  std::vector<int> readers;
  {
    exec::ProcessLauncher launcher(io);
    // Whatever fails below, every FIFO gets a reader before the destructor joins its thread,
    // and every thread given up has written its file and ended before the readers are closed:
    // a write to a FIFO with no reader left raises SIGPIPE, which the daemon ignores and this
    // test binary does not.
    struct Release {
      exec::ProcessLauncher& launcher;
      std::vector<std::string>& fifos;
      std::vector<int>& readers;
      ~Release() {
        for (const auto& f : fifos) {
          readers.push_back(open(f.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
        }
        CHECK(SpinUntil([&] { return launcher.stuck_threads() == 0; }));
      }
    } release{launcher, fifos, readers};
    for (int i = 0; i <= kLimit; ++i) {
      CAPTURE(i);
      fifos.push_back(dir + "/hung-" + std::to_string(i));
      REQUIRE(mkfifo(fifos.back().c_str(), 0600) == 0);
      exec::LaunchPlan stuck = TruePlan(dir, nullptr);
      stuck.files = {{fifos.back(), "x"}};
      auto progress = stuck.progress;
      launcher.Start(std::move(stuck), exec::RunLimits{}, exec::RunCallbacks{},
                     [](StatusOr<std::shared_ptr<exec::RunHandle>>) {});
      REQUIRE(SpinUntil([&] { return progress->on_thread.load(); }));
      // The last one finds the limit reached: it keeps the thread, not given up.
      CHECK(launcher.ReplaceStuckThread(*progress) == (i < kLimit));
      CHECK(progress->given_up.load() == (i < kLimit));
    }
    CHECK(launcher.stuck_threads() == kLimit);
    CHECK(launcher.replaced_threads() == kLimit);
  }
  for (int fd : readers) {
    if (fd >= 0) close(fd);
  }
  std::filesystem::remove_all(dir);
}

// When no thread can be made to replace a stuck one, the stuck launch is not given up and keeps
// the queue; once a thread can be had, it is replaced. The shortage is real: the address space
// is limited (RLIMIT_AS) below what a new thread's stack needs (pthread_create fails, EAGAIN;
// the catch of a bad_alloc for the thread's state is not reached this way), in a forked child
// of a process that has made no thread before (its own ctest entry), so no stack freed by an
// earlier thread is at hand to reuse. SKIPPED under AddressSanitizer, whose shadow memory
// cannot live under such a limit.
TEST_CASE("a stuck launcher thread that cannot be replaced keeps its launch and the queue",
          "[.][launch-no-thread]") {
#ifdef CONCLAVE_IN_CHILD_ASAN
  std::cerr << "SKIPPED: RLIMIT_AS cannot be set under AddressSanitizer\n";
  std::exit(77);
#endif
  char tmpl[] = "/tmp/cv-launch-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const std::string fifo = dir + "/hung.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  // Each step that fails says so on stderr; the child's exit status is the check.
  bool ok = testing::InChild([&] {
    auto fail = [](const char* what) {
      std::cerr << "launch-no-thread: " << what << "\n";
      return false;
    };
    boost::asio::io_context io;
    auto guard = boost::asio::make_work_guard(io);
    std::atomic<pid_t> early2{0};
    std::optional<StatusOr<std::shared_ptr<exec::RunHandle>>> launched1, launched2;
    exec::ProcessLauncher launcher(io);
    exec::LaunchPlan stuck = TruePlan(dir, nullptr);
    stuck.files = {{fifo, "x"}};
    auto progress = stuck.progress;
    launcher.Start(std::move(stuck), exec::RunLimits{}, exec::RunCallbacks{},
                   [&](StatusOr<std::shared_ptr<exec::RunHandle>> r) { launched1 = std::move(r); });
    launcher.Start(TruePlan(dir, &early2), exec::RunLimits{}, exec::RunCallbacks{},
                   [&](StatusOr<std::shared_ptr<exec::RunHandle>> r) { launched2 = std::move(r); });
    if (!SpinUntil([&] { return progress->on_thread.load(); })) return fail("never on the thread");
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    // Room for small allocations, but not for a new thread's stack (half of it, at most 1 MiB).
    pthread_attr_t attr;
    size_t stack = 0;
    if (pthread_attr_init(&attr) != 0 || pthread_attr_getstacksize(&attr, &stack) != 0) {
      return fail("no default stack size");
    }
    pthread_attr_destroy(&attr);
    struct rlimit was {};
    getrlimit(RLIMIT_AS, &was);
    struct rlimit tight = was;
    tight.rlim_cur = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) +
                     std::min<rlim_t>(stack / 2, 1 << 20);
    if (setrlimit(RLIMIT_AS, &tight) != 0) return fail("setrlimit");
    const bool replaced = launcher.ReplaceStuckThread(*progress);
    setrlimit(RLIMIT_AS, &was);
    if (replaced) return fail("replaced without a thread to be had");
    if (progress->given_up.load()) return fail("given up without a replacement");
    if (launcher.replaced_threads() != 0 || launcher.stuck_threads() != 0) {
      return fail("counted a replacement that did not happen");
    }
    if (!progress->on_thread.load()) return fail("the old thread let go of its launch");
    // With threads to be had again, the same launch is replaced and the queue runs on.
    if (!launcher.ReplaceStuckThread(*progress)) return fail("not replaced once it could be");
    if (!RunUntil(io, [&] { return launched2.has_value(); })) return fail("queue did not run");
    if (!launched2->ok() || launched2->value()->pid() != early2.load()) return fail("launch 2");
    int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // let the old one go
    if (!SpinUntil([&] { return launcher.stuck_threads() == 0; })) return fail("never back");
    close(reader);
    io.poll();
    return !launched1.has_value() || fail("the given-up launch was reported");
  }, 60);
  // The child may have died with the FIFO still unread: open it so nothing waits on it.
  int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (reader >= 0) close(reader);
  std::filesystem::remove_all(dir);
  CHECK(ok);
}

}  // namespace
