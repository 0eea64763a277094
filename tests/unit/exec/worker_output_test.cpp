// Unit tests: a real worker's output is written off the loop (exec/log_writer). With the
// launcher's writer held, the loop runs on, on_stdout sees the output and the process is
// reaped, but nothing is on disk and the outcome waits; a worker printing faster than the
// writer writes is held at its pipe once kMaxUnwritten bytes wait, and loses nothing, not even
// what its pipe holds when eof_grace ends, and is not killed as idle while it waits.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <optional>
#include <string>

#include "exec/launcher.h"
#include "exec/worker_run.h"
#include "io_run_until.h"

using namespace conclave;

namespace {

// The pipes open in this process (the run's read ends, and the write ends the launcher keeps).
int OpenPipes() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    n += std::filesystem::read_symlink(e.path(), ec).string().rfind("pipe:", 0) == 0;
  }
  return n;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Fixture {
  Fixture() {
    char tmpl[] = "/tmp/cv-output-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
  }
  ~Fixture() {
    if (!released) Release();  // a failed check must not leave the writer's thread held
    launcher.reset();
    std::filesystem::remove_all(dir);
  }

  // Holds the writer: every write queues behind this until Release.
  void Hold() {
    launcher->log_writer().Post([held = gate.get_future().share()] { held.wait(); });
  }
  void Release() {
    released = true;
    gate.set_value();
  }

  std::shared_ptr<exec::WorkerRun> Launch(std::vector<std::string> argv,
                                          exec::RunLimits limits = {}) {
    exec::LaunchPlan plan;
    plan.spec.argv = std::move(argv);
    plan.spec.env = {"PATH=/usr/bin:/bin"};
    plan.spec.cwd = dir;
    plan.spec.stdin_null = true;
    plan.transcript_path = dir + "/d/transcript.log";
    plan.stdout_path = dir + "/d/stdout.log";
    limits.hard_timeout = std::chrono::seconds(60);
    exec::RunCallbacks cb;
    cb.on_stdout = [this](std::string_view chunk) { seen += chunk; };
    cb.on_output = [this] { ++outputs; };
    cb.on_finished = [this](const exec::RunOutcome& o) { finished = o; };
    std::optional<StatusOr<std::shared_ptr<exec::RunHandle>>> launched;
    launcher->Start(std::move(plan), limits, std::move(cb),
                   [&](StatusOr<std::shared_ptr<exec::RunHandle>> r) { launched = std::move(r); });
    REQUIRE(RunUntil(io, [&] { return launched.has_value(); }));
    REQUIRE(launched->ok());
    auto run = std::dynamic_pointer_cast<exec::WorkerRun>(launched->value());
    REQUIRE(run != nullptr);
    return run;
  }

  // Lets the writer go; the run then ends with all `bytes` of its stdout read and on disk, in
  // stdout.log and in the transcript.
  void ReleaseAndCheckAllWritten(int64_t bytes) {
    Release();
    REQUIRE(RunUntil(io, [&] { return finished.has_value(); }));
    CHECK(finished->exit_code == 0);
    CHECK(finished->stdout_bytes == bytes);
    for (const char* log : {"/d/stdout.log", "/d/transcript.log"}) {
      struct stat st {};
      REQUIRE(stat((dir + log).c_str(), &st) == 0);
      CHECK(st.st_size == bytes);
    }
    CHECK(seen.size() == static_cast<size_t>(bytes));
  }

  std::string dir;
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard =
      boost::asio::make_work_guard(io);
  std::optional<exec::ProcessLauncher> launcher{std::in_place, io};
  std::promise<void> gate;
  bool released = false;
  std::string seen;
  int outputs = 0;
  std::optional<exec::RunOutcome> finished;
};

TEST_CASE("a worker's output is written off the loop and its outcome waits for the writes",
          "[exec][launch]") {
  Fixture fx;
  fx.Hold();
  auto run = fx.Launch({"/bin/sh", "-c", "printf out-1; printf err-1 >&2"});
  // The process exits and both pipes end while nothing can be written.
  REQUIRE(RunUntil(fx.io, [&] { return run->finished(); }));
  bool loop_ran = false;
  boost::asio::post(fx.io, [&] { loop_ran = true; });
  REQUIRE(RunUntil(fx.io, [&] { return loop_ran; }));
  CHECK(fx.seen == "out-1");  // the budget's probe reads stdout as it comes
  CHECK(fx.outputs == 0);     // a follower is told only of what it can read
  CHECK(!fx.finished.has_value());
  CHECK(!std::filesystem::exists(fx.dir + "/d"));
  CHECK(run->unwritten_bytes() == 10);
  fx.Release();
  REQUIRE(RunUntil(fx.io, [&] { return fx.finished.has_value(); }));
  CHECK(fx.finished->exit_code == 0);
  CHECK(fx.outputs >= 1);
  CHECK(run->unwritten_bytes() == 0);
  const std::string transcript = Slurp(fx.dir + "/d/transcript.log");
  CHECK(transcript.size() == 10);
  CHECK(transcript.find("out-1") != std::string::npos);
  CHECK(transcript.find("err-1") != std::string::npos);
  CHECK(Slurp(fx.dir + "/d/stdout.log") == "out-1");
}

TEST_CASE("a worker printing faster than its output is written waits at its pipe, losing nothing",
          "[exec][launch]") {
  constexpr int64_t kBytes = 8 << 20;
  Fixture fx;
  fx.Hold();
  auto run = fx.Launch({"/bin/sh", "-c", "head -c 8388608 /dev/zero | tr '\\0' x"});
  REQUIRE(RunUntil(fx.io, [&] { return run->reading_paused() || run->finished(); }));
  REQUIRE(run->reading_paused());
  CHECK(run->unwritten_bytes() > exec::WorkerRun::kMaxUnwritten);
  CHECK(run->unwritten_bytes() <= exec::WorkerRun::kMaxUnwritten + 16384);  // one read past it
  CHECK(run->phase() == exec::WorkerRun::Phase::kRunning);  // its output is not all read
  fx.ReleaseAndCheckAllWritten(kBytes);
}

// The leader exits with its last output still in a pipe the daemon is not reading (the writer
// is behind): eof_grace (0 here) ends, and that output is read before the pipe is closed. Or,
// on a loaded host, the read that pauses the pipe is done but its bytes still queued behind the
// grace's handler when it runs: that read's bytes come first, then what the pipe holds. Before
// the grace let that read finish, the pipe was closed under it and the last 32 KiB were lost
// (6 to 13 runs in 80 under two busy loops).
TEST_CASE("what a worker printed last is read when eof_grace ends while its pipe waits",
          "[exec][launch]") {
  constexpr int64_t kBytes = 560 << 10;  // past kMaxUnwritten plus one read, within one pipe more
  Fixture fx;
  fx.Hold();
  exec::RunLimits limits;
  limits.eof_grace = std::chrono::milliseconds(0);
  auto run = fx.Launch({"/bin/sh", "-c", "head -c 573440 /dev/zero | tr '\\0' x"}, limits);
  REQUIRE(RunUntil(fx.io, [&] { return !run->pipes_open() || fx.finished.has_value(); }));
  REQUIRE(!fx.finished.has_value());
  fx.ReleaseAndCheckAllWritten(kBytes);
}

// A worker held at its pipe because the writer is behind prints nothing the daemon reads, but
// it is not silent: idle_kill must not end it, however long the writer takes.
TEST_CASE("a worker waiting at a pipe the daemon does not read is not killed as idle",
          "[exec][launch]") {
  constexpr int64_t kBytes = 1 << 20;
  Fixture fx;
  fx.Hold();
  exec::RunLimits limits;
  limits.idle_kill = std::chrono::milliseconds(100);  // checked every 50 ms (the floor)
  auto run = fx.Launch({"/bin/sh", "-c", "head -c 1048576 /dev/zero | tr '\\0' x"}, limits);
  // Until it pauses, it counts as active: a slow start (a loaded host) must not be idle-killed.
  REQUIRE(RunUntil(fx.io, [&] {
    run->NoteActivity();
    return run->reading_paused() || run->finished();
  }));
  REQUIRE(run->reading_paused());
  // Each check comes at least 50 ms after the one before: the fifth from here is 200 ms or
  // more after the run's last output was read and its last activity, twice idle_kill.
  const int from = run->idle_checks();
  REQUIRE(RunUntil(fx.io, [&] {
    return run->idle_checks() >= from + 5 || run->phase() != exec::WorkerRun::Phase::kRunning;
  }));
  CHECK(run->phase() == exec::WorkerRun::Phase::kRunning);
  CHECK(run->reading_paused());
  fx.ReleaseAndCheckAllWritten(kBytes);
  CHECK(!fx.finished->idle_killed);
}

// The launcher keeps the pipes' write ends until the worker has exited, so its exit and the end
// of its output reach the loop in one wake-up. A worker that closes its stdout and stderr and
// runs on does not end its streams; its exit does, at once, not after eof_grace.
TEST_CASE("a worker's pipes end with its exit: the daemon holds their write ends until then",
          "[exec][launch]") {
  Fixture fx;
  const std::string closed = fx.dir + "/closed", go = fx.dir + "/go";
  REQUIRE(mkfifo(closed.c_str(), 0600) == 0);
  REQUIRE(mkfifo(go.c_str(), 0600) == 0);
  const int told = open(closed.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(told >= 0);
  const int pipes_before = OpenPipes();
  exec::RunLimits limits;
  limits.eof_grace = std::chrono::hours(1);  // a run that waited for it would not finish here
  auto run = fx.Launch({"/bin/sh", "-c",
                        "exec 3<>\"$1/go\"; printf out; printf err >&2; exec >&- 2>&-; "
                        "printf x > \"$1/closed\"; read x <&3",
                        "sh", fx.dir},
                       limits);
  // The worker has closed its ends of both pipes (it says so through the fifo).
  pollfd pfd{told, POLLIN, 0};
  REQUIRE(poll(&pfd, 1, 60000) == 1);
  char byte = 0;
  REQUIRE(read(told, &byte, 1) == 1);
  close(told);
  while (fx.io.poll() > 0) {
  }
  CHECK(fx.seen == "out");
  // The daemon's own write ends keep both from ending.
  CHECK(run->pipe_open(true));
  CHECK(run->pipe_open(false));
  CHECK(!run->finished());
  // The worker holds the fifo open to read it: this open does not wait (ENXIO if it died).
  const int let_go = open(go.c_str(), O_WRONLY | O_NONBLOCK);
  REQUIRE(let_go >= 0);
  REQUIRE(write(let_go, "\n", 1) == 1);
  close(let_go);
  REQUIRE(RunUntil(fx.io, [&] { return fx.finished.has_value(); }));
  CHECK(fx.finished->exit_code == 0);
  CHECK(fx.finished->stdout_bytes == 3);
  CHECK(fx.finished->stderr_tail == "err");
  CHECK(!run->pipes_open());
  CHECK(OpenPipes() == pipes_before);  // none of the four left open
}

// The daemon's ends are let go at the exit, but a descendant's are not: a pipe it keeps still
// has a writer, so eof_grace runs, then the group is ended and the run finishes.
TEST_CASE("a descendant that keeps a worker's pipes is ended after eof_grace", "[exec][launch]") {
  Fixture fx;
  exec::RunLimits limits;
  limits.eof_grace = std::chrono::milliseconds(0);
  auto run = fx.Launch({"/bin/sh", "-c", "printf out; tail -f /dev/null & exit 0"}, limits);
  REQUIRE(RunUntil(fx.io, [&] { return fx.finished.has_value(); }));  // tail would run on for ever
  CHECK(fx.finished->exit_code == 0);
  CHECK(fx.seen == "out");
  CHECK(!run->pipes_open());
}

}  // namespace
