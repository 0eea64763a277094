// Service-level tests of what follows a finished run — retries with backoff, the circuit
// breaker, rate-limit cooldowns, gates holding an outcome — over the real store, with a fake
// clock and a fake launcher: no processes, no sleeps.
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "fixture_file.h"
#include "service_harness.h"

namespace conclave {
namespace {
using domain::DispatchState;
using domain::TaskState;
using testing::Fixture;
using testing::ServiceHarness;

// A harness with one claude-shaped profile (no retries of the CLI's own), one terminal.
struct Claude : ServiceHarness {
  Claude() {
    auto& p = AddProfile("cl", "anthropic");
    p.parser = "claude-json";
    AddTerminal("w1", "cl");
  }
  testing::FakeLauncher::Started* Running() {
    auto r = launcher.Running();
    return r.empty() ? nullptr : r.front();
  }
  size_t Launched() const { return launcher.launches.size(); }
  void Finish(const std::string& stdout_text, int exit_code, const std::string& err = "") {
    auto* l = Running();
    REQUIRE(l);
    launcher.Finish(l, stdout_text, exit_code, err);
  }
  bool Settled(int64_t task, TaskState want) {
    return RunUntil([&] { return Task(task).status == want && core->batcher.commits() > 0; });
  }
};

TEST_CASE("an operational failure is retried after its backoff, on the fake clock",
          "[service][completion]") {
  Claude h;
  int64_t t = h.AddTask("do it");
  REQUIRE(h.Dispatch(t, "w1").ok());
  REQUIRE(h.Launched() == 1);
  h.Finish(Fixture("claude/json/http500.txt"), 1);
  // Recorded: failed (provider_unavailable, operational), a new attempt queued for later.
  REQUIRE(h.RunUntil([&] { return h.Dispatches(t).size() == 2; }));
  auto ds = h.Dispatches(t);
  CHECK(ds[0].state == DispatchState::kFailed);
  CHECK(ds[0].failure_kind == "provider_unavailable");
  CHECK(ds[0].failure_class == "operational");
  CHECK(ds[1].state == DispatchState::kQueued);
  CHECK(ds[1].op_retries == 1);
  int64_t delay = ds[1].not_before_ms - h.clock.NowMs();
  CHECK(delay >= 800);   // base 1 s, jitter ±20 %
  CHECK(delay <= 1200);
  CHECK(h.Task(t).status == TaskState::kDispatched);
  // Not before its time...
  h.clock.Advance(delay - 50);
  h.Settle();
  CHECK(h.Launched() == 1);
  // ...then at once.
  h.clock.Advance(100);
  REQUIRE(h.RunUntil([&] { return h.Launched() == 2; }));
  h.Finish(Fixture("claude/json/success.txt"), 0);
  REQUIRE(h.Settled(t, TaskState::kCompleted));
  auto done = h.Messages("worker_done");
  REQUIRE(done.size() == 2);
  CHECK(done[0].payload.find("\"will_retry\":true") != std::string::npos);
  CHECK(done[1].payload.find("\"will_retry\":false") != std::string::npos);
}

TEST_CASE("five same-fingerprint failures open the breaker — dispatch is refused until a re-plan",
          "[service][completion]") {
  Claude h;
  auto& shell = h.AddProfile("sh", "tools");
  (void)shell;
  h.AddTerminal("s1", "sh");
  int64_t t = h.AddTask("make test");
  for (int i = 1; i <= 5; ++i) {
    INFO("attempt " << i);
    REQUIRE(h.Dispatch(t, "s1").ok());
    REQUIRE(h.launcher.Running().size() == 1);
    h.launcher.Finish(h.launcher.Running().front(), "",  2,
                      "test_parser.cpp:" + std::to_string(40 + i) + ": assertion failed: tokens == 3");
    TaskState want = i < 5 ? TaskState::kReady : TaskState::kBlocked;
    REQUIRE(h.Settled(t, want));
  }
  auto task = h.Task(t);
  CHECK(task.blocked_reason == "circuit_open");
  CHECK(task.breaker_count == 5);
  Status refused = h.Dispatch(t, "s1");
  CHECK(refused.code() == Code::kFailedPrecondition);
  CHECK(refused.message().find("circuit open after 5 consecutive failures") != std::string::npos);
  auto esc = h.Messages("escalation");
  REQUIRE_FALSE(esc.empty());
  CHECK(esc.back().priority == "urgent");
  CHECK(esc.back().payload.find("\"attempts\"") != std::string::npos);
  // A re-plan closes it.
  service::TaskUpdateInput up;
  up.id = t;
  up.hypothesis = "the tokenizer drops quotes";
  bool updated = false;
  h.services->tasks.Update(up, [&](StatusOr<service::TaskView> v) { updated = v.ok(); });
  REQUIRE(h.RunUntil([&] { return updated; }));
  CHECK(h.Task(t).status == TaskState::kReady);
  CHECK(h.Dispatch(t, "s1").ok());
}

TEST_CASE("a rate limit cools the profile down: queued work waits for the cooldown",
          "[service][completion]") {
  Claude h;
  int64_t t = h.AddTask("do it");
  REQUIRE(h.Dispatch(t, "w1").ok());
  // claude's 429 result carries the provider's retry-after (7 s in the captured output).
  std::string out = Fixture("claude/json/http429.txt");
  h.Finish(out, 1, "retry-after: 7");
  REQUIRE(h.RunUntil([&] { return h.Dispatches(t).size() == 2; }));
  auto cooldowns = h.services->scheduler.Cooldowns();
  REQUIRE(cooldowns.size() == 1);
  CHECK(cooldowns[0].profile == "cl");
  int64_t until = cooldowns[0].until_ms;
  CHECK(until - h.clock.NowMs() == 7000);
  // The retry's own backoff (≈1 s) passes, but the profile is still cooling down.
  h.clock.Advance(2000);
  h.Settle();
  CHECK(h.Launched() == 1);
  h.clock.Advance(until - h.clock.NowMs() + 10);
  REQUIRE(h.RunUntil([&] { return h.Launched() == 2; }));
}

TEST_CASE("a provider's retry-after hint is capped by retry_after_cap_s",
          "[service][completion]") {
  ServiceHarness h([](config::Config& c) { c.retry_after_cap_s = 3; });
  auto& p = h.AddProfile("cl", "anthropic");
  p.parser = "claude-json";
  h.AddTerminal("w1", "cl");
  int64_t t = h.AddTask("do it");
  REQUIRE(h.Dispatch(t, "w1").ok());
  h.launcher.Finish(h.launcher.Running().front(), Fixture("claude/json/http429.txt"), 1,
                    "retry-after: 7");
  REQUIRE(h.RunUntil([&] { return h.Dispatches(t).size() == 2; }));
  auto cooldowns = h.services->scheduler.Cooldowns();
  REQUIRE(cooldowns.size() == 1);
  CHECK(cooldowns[0].until_ms - h.clock.NowMs() == 3000);  // 7 s asked, 3 s allowed
}

TEST_CASE("a decision gate holds a finished task's outcome until it is resolved",
          "[service][gates]") {
  Claude h;
  int64_t dep = h.AddTask("first");
  int64_t later = h.AddTask("second", [&](domain::Task& t) { (void)t; });
  (void)later;
  REQUIRE(h.Dispatch(dep, "w1").ok());
  std::optional<int64_t> gate;
  h.services->gates.Create(dep, "ship it?", {"yes", "no"}, 0,
                           [&](StatusOr<domain::Gate> g) { gate = g->id; });
  REQUIRE(h.RunUntil([&] { return gate.has_value(); }));
  CHECK(h.Task(dep).status == TaskState::kBlocked);
  h.Finish(Fixture("claude/json/success.txt"), 0);
  REQUIRE(h.RunUntil([&] { return h.Task(dep).resume_status == TaskState::kCompleted; }));
  CHECK(h.Task(dep).status == TaskState::kBlocked);  // still held
  bool resolved = false;
  h.services->gates.Resolve(*gate, "yes", {}, "", [&](StatusOr<domain::Gate> g) { resolved = g.ok(); });
  REQUIRE(h.RunUntil([&] { return resolved; }));
  CHECK(h.Task(dep).status == TaskState::kCompleted);
  bool wrong = false;
  h.services->gates.Resolve(*gate, "no", {}, "", [&](StatusOr<domain::Gate> g) {
    wrong = g.status().code() == Code::kFailedPrecondition;
  });
  REQUIRE(h.RunUntil([&] { return wrong; }));
}

TEST_CASE("a dependant becomes ready when its dependency completes", "[service][tasks]") {
  Claude h;
  int64_t first = h.AddTask("first");
  service::CreateTaskInput in;
  in.task.brief = "second";
  in.deps = {first};
  int64_t second = 0;
  h.services->tasks.Create(in, [&](StatusOr<service::CreateTaskResult> r) { second = r->task.task.id; });
  REQUIRE(h.RunUntil([&] { return second != 0; }));
  CHECK(h.Task(second).status == TaskState::kPending);
  CHECK(h.Dispatch(second, "w1").code() == Code::kFailedPrecondition);
  REQUIRE(h.Dispatch(first, "w1").ok());
  h.Finish(Fixture("claude/json/success.txt"), 0);
  REQUIRE(h.RunUntil([&] { return h.Task(second).status == TaskState::kReady; }));
}

TEST_CASE("max_concurrent queues work until a run ends — the queue runs in order",
          "[service][scheduler]") {
  ServiceHarness h;
  h.AddProfile("p", "f", /*max_concurrent=*/1);
  h.AddTerminal("a", "p");
  h.AddTerminal("b", "p");
  int64_t t1 = h.AddTask("one"), t2 = h.AddTask("two"), t3 = h.AddTask("three");
  REQUIRE(h.Dispatch(t1, "@profile:p").ok());
  REQUIRE(h.Dispatch(t2, "@profile:p").ok());
  REQUIRE(h.Dispatch(t3, "@profile:p").ok());
  REQUIRE(h.launcher.launches.size() == 1);  // one at a time for this profile, though b is idle
  CHECK(h.Dispatches(t2)[0].state == DispatchState::kQueued);
  h.launcher.Finish(h.launcher.Running().front(), "ok\n", 0);
  REQUIRE(h.RunUntil([&] { return h.launcher.launches.size() == 2; }));
  CHECK(h.launcher.launches[1].plan.spec.env.size() > 0);
  CHECK(h.Dispatches(t2)[0].state == DispatchState::kRunning);  // t2 before t3
  CHECK(h.Dispatches(t3)[0].state == DispatchState::kQueued);
}

TEST_CASE("cancelling a task stops its run — the run ends as cancelled", "[service][tasks]") {
  ServiceHarness h;
  h.AddProfile("p", "f");
  h.AddTerminal("a", "p");
  int64_t t = h.AddTask("long");
  REQUIRE(h.Dispatch(t, "a").ok());
  bool cancelled = false;
  h.services->tasks.Cancel(t, "", [&](StatusOr<service::TaskView> v) { cancelled = v.ok(); });
  REQUIRE(h.RunUntil([&] { return cancelled; }));
  auto* run = h.launcher.Running().front();
  CHECK(run->run->stop == domain::StopReason::kCancelled);
  h.launcher.Finish(run, "", -1);
  REQUIRE(h.RunUntil([&] { return h.Dispatches(t)[0].state == DispatchState::kCancelled; }));
  CHECK(h.Task(t).status == TaskState::kCancelled);
  CHECK(h.core->terminals.Get("a")->state == domain::TerminalState::kIdle);
}

// Occupies every thread of the helper pool until Open() (or destruction). The state is shared
// with the pool's tasks, which may still be waking when this object is gone.
class HelperBlock {
 public:
  explicit HelperBlock(boost::asio::thread_pool& pool) : state_(std::make_shared<State>()) {
    const int threads = service::Core::kHelperThreads;
    for (int i = 0; i < threads; ++i) {
      boost::asio::post(pool, [state = state_] {
        std::unique_lock<std::mutex> lock(state->mu);
        ++state->started;
        state->cv.notify_all();
        state->cv.wait(lock, [&] { return state->open; });
      });
    }
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->cv.wait(lock, [&] { return state_->started == threads; });
  }
  ~HelperBlock() { Open(); }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      state_->open = true;
    }
    state_->cv.notify_all();
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    int started = 0;
    bool open = false;
  };
  std::shared_ptr<State> state_;
};

size_t GitCalls(ServiceHarness& h) {
  size_t n = 0;
  for (const auto& argv : h.commands.calls) n += !argv.empty() && argv[0] == "git";
  return n;
}

// Dispatches task on terminal "a" and returns its run once launched.
testing::FakeLauncher::Started* Launch(ServiceHarness& h, int64_t task) {
  REQUIRE(h.Dispatch(task, "a").ok());
  REQUIRE(h.RunUntil([&] { return h.launcher.Running().size() == 1; }));
  return h.launcher.Running().front();
}

TEST_CASE("a run that printed little is recorded without the helper pool, anything more "
          "waits for it — git and big reads never run on the loop",
          "[service][completion]") {
  ServiceHarness h;
  h.AddProfile("p", "f");
  h.AddTerminal("a", "p");
  auto running = [&](int64_t t) { return h.Dispatches(t)[0].state == DispatchState::kRunning; };
  // A few KiB of output: read and parsed on the loop, recorded while every helper is busy.
  int64_t small = h.AddTask("small");
  auto* run = Launch(h, small);
  {
    HelperBlock busy(h.core->helpers);
    h.launcher.Finish(run, std::string(8000, 'x') + "\ndone\n", 0);
    REQUIRE(h.RunUntil([&] { return h.Task(small).status == TaskState::kCompleted; }));
  }
  // More than 16 KiB printed: read on the helpers only.
  int64_t big = h.AddTask("big");
  run = Launch(h, big);
  {
    HelperBlock busy(h.core->helpers);
    h.launcher.Finish(run, std::string(20000, 'x') + "\n", 0);
    h.Settle();
    CHECK(running(big));
    busy.Open();
    REQUIRE(h.RunUntil([&] { return !running(big); }));
  }
  // Little printed, but the log on disk is big (a worker wrote into it): the helpers read it.
  int64_t grown = h.AddTask("grown");
  run = Launch(h, grown);
  {
    std::filesystem::create_directories(std::filesystem::path(run->plan.stdout_path).parent_path());
    std::ofstream(run->plan.stdout_path) << std::string(100000, 'y') << "\n";
    HelperBlock busy(h.core->helpers);
    h.launcher.Finish(run, "", 0);
    h.Settle();
    CHECK(running(grown));
    busy.Open();
    REQUIRE(h.RunUntil([&] { return !running(grown); }));
  }
  // Little printed, and stdout.log swapped for a link (to a small file, so only the link
  // gives it away): the loop does not follow it.
  int64_t linked = h.AddTask("linked");
  run = Launch(h, linked);
  {
    const std::filesystem::path log = run->plan.stdout_path;
    std::filesystem::create_directories(log.parent_path());
    std::ofstream(log.parent_path() / "elsewhere.txt") << "planted\n";
    std::filesystem::create_symlink(log.parent_path() / "elsewhere.txt", log);
    HelperBlock busy(h.core->helpers);
    h.launcher.Finish(run, "", 0);
    h.Settle();
    CHECK(running(linked));
    busy.Open();
    REQUIRE(h.RunUntil([&] { return !running(linked); }));
  }
  // A writer that claims files: the claims are checked with git, on the helpers only.
  int64_t writer = h.AddTask("write", [](domain::Task& t) { t.role = "writer"; });
  run = Launch(h, writer);
  const size_t git_before = GitCalls(h);
  HelperBlock busy(h.core->helpers);
  h.launcher.Finish(run, "SUMMARY: PASS\nCHANGES\n- src/a.cpp: did x\nEVIDENCE\nran it\n", 0);
  h.Settle();
  CHECK(GitCalls(h) == git_before);
  CHECK(running(writer));
  busy.Open();
  REQUIRE(h.RunUntil([&] { return !running(writer); }));
  CHECK(GitCalls(h) > git_before);
}

TEST_CASE("worker_done's payload is one canonical JSON object with the run's result as stored",
          "[service][completion]") {
  Claude h;
  int64_t t = h.AddTask("do it");
  REQUIRE(h.Dispatch(t, "w1").ok());
  h.Finish(Fixture("claude/json/success.txt"), 0);
  REQUIRE(h.Settled(t, TaskState::kCompleted));
  auto done = h.Messages("worker_done");
  REQUIRE(done.size() == 1);
  nlohmann::json payload = nlohmann::json::parse(done[0].payload);
  // Printed as nlohmann prints it: members in key order, nothing doubled or left out.
  CHECK(payload.dump() == done[0].payload);
  const std::string stored = h.Dispatches(t)[0].result;
  CHECK(payload.at("result") == nlohmann::json::parse(stored));
  CHECK(payload.at("result").is_object());
  CHECK_FALSE(payload.at("result").empty());
  CHECK(payload.at("outcome") == "succeeded");
  CHECK(payload.at("will_retry") == false);
}

TEST_CASE("a finished dispatch reads its review round only when its task is a reviewer",
          "[service][completion]") {
  Claude h;
  // Every statement prepared that looks up a round by task: counted, never refused.
  int round_reads = 0;
  h.db->SetFaultHookForTest([&](std::string_view sql) {
    if (sql.find("FROM review_rounds WHERE task_id") != std::string_view::npos) ++round_reads;
    return SQLITE_OK;
  });
  int64_t writer = h.AddTask("write it");
  REQUIRE(h.Dispatch(writer, "w1").ok());
  h.Finish(Fixture("claude/json/success.txt"), 0);
  REQUIRE(h.Settled(writer, TaskState::kCompleted));
  h.Settle();
  CHECK(round_reads == 0);  // a writer's dispatch is no round's: nothing read after the commit
  // A reviewer task (not a round: none was launched) is still looked up.
  int64_t reviewer = h.AddTask("review it", [](domain::Task& t) { t.role = "reviewer"; });
  REQUIRE(h.Dispatch(reviewer, "w1").ok());
  h.Finish(Fixture("claude/json/success.txt"), 0);
  REQUIRE(h.RunUntil([&] { return round_reads > 0; }));
  h.db->SetFaultHookForTest(nullptr);
}

}  // namespace
}  // namespace conclave
