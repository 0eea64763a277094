// End-to-end: the real, unmodified model CLIs (installed from npm by install-clis.sh) driven
// by a real conclaved with the shipped profiles, inside a loopback-only network namespace,
// against the local mock provider. Nothing here can reach a real provider: the namespace has
// no route off the box. Skipped (exit 77) when npm cannot install the CLIs.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>

#include "e2e_support.h"

using namespace conclave::e2e;
using namespace std::chrono_literals;

namespace {

void DispatchEndsInWorkerDone(const std::string& profile, const std::string& family) {
  E2eDaemon e;
  std::string t = Terminal(e, profile);
  auto term = e.d.CliJson({"terminal", "show", t});
  CHECK(term["family"] == family);
  auto start = std::chrono::steady_clock::now();
  json p = RunTask(e, t, "Check the parser and report. MOCK:contract\n");
  INFO(p.dump(2));
  CHECK(p["outcome"] == "succeeded");
  CHECK(p["failure_kind"] == "");
  CHECK(p["result"]["contract"]["ok"] == true);
  CHECK(p["result"]["usage"]["output_tokens"].get<int64_t>() > 0);
  CHECK(p["cost_usd"].get<double>() > 0);
  CHECK(std::chrono::steady_clock::now() - start < 240s);
}

// The CLI itself runs `conclave send --type worker_done` through its shell tool; the daemon
// binds the report to the attempt by the token in the CLI's environment.
void CliReportsItself(const std::string& profile) {
  E2eDaemon e;
  std::string t = Terminal(e, profile);
  std::string subject = profile + "-says-done";
  json p = RunTask(e, t,
                   "Report completion.\nMOCK:tool_worker_done CMD: conclave send --type worker_done "
                   "--subject " + subject + "\n");
  CHECK(p["outcome"] == "succeeded");
  auto reports = e.d.CliJson({"inbox", "--types", "worker_done", "--from", t});
  REQUIRE(reports["messages"].size() == 1);
  CHECK(reports["messages"][0]["subject"] == subject);
  CHECK(reports["messages"][0]["to"] == "coordinator");
}

}  // namespace

TEST_CASE("claude: a dispatch ends in worker_done with the parsed result, cost and usage", "[e2e]") {
  DispatchEndsInWorkerDone("claude", "anthropic");
}

TEST_CASE("codex: a dispatch ends in worker_done with the parsed result and estimated cost",
          "[e2e]") {
  DispatchEndsInWorkerDone("codex", "openai");
}

TEST_CASE("qwen: a dispatch ends in worker_done", "[e2e][e2e-more]") {
  DispatchEndsInWorkerDone("qwen", "alibaba");
}

TEST_CASE("opencode: a dispatch ends in worker_done", "[e2e][e2e-more]") {
  DispatchEndsInWorkerDone("opencode", "moonshot");  // its default model is Moonshot's kimi
}

TEST_CASE("gemini: a dispatch ends in worker_done", "[e2e][e2e-more]") {
  DispatchEndsInWorkerDone("gemini", "google");
}

TEST_CASE("copilot: a dispatch ends in worker_done", "[e2e][e2e-more]") {
  DispatchEndsInWorkerDone("copilot", "openai");
}

TEST_CASE("claude runs `conclave send --type worker_done` itself with its dispatch token", "[e2e]") {
  CliReportsItself("claude");
}

TEST_CASE("codex runs `conclave send --type worker_done` itself too", "[e2e]") {
  CliReportsItself("codex");
}

TEST_CASE("copilot runs `conclave send --type worker_done` itself too", "[e2e][e2e-more]") {
  CliReportsItself("copilot");
}

TEST_CASE("claude streaming an answer for longer than 3 x the idle timeout stays alive",
          "[e2e]") {
  // Test-only change: the copied claude profile gets a 2 s idle timeout, so a silent run
  // would be killed as heartbeat_lost after 6 s; the mock streams its answer over 12 s.
  E2eDaemon e({{"heartbeat_interval_s", 1}}, [](const std::string& dir) {
    auto p = json::parse(ReadAll(dir + "/claude.json"));
    p["idle_timeout_s"] = 2;
    std::ofstream(dir + "/claude.json") << p.dump(2);
  });
  std::string t = Terminal(e, "claude");
  auto start = std::chrono::steady_clock::now();
  json p = RunTask(e, t, "Think long, answer slowly. MOCK:slowstream_12\n");
  INFO(p.dump(2));
  CHECK(std::chrono::steady_clock::now() - start >= 12s);
  CHECK(p["outcome"] == "succeeded");
  CHECK(p["failure_kind"] == "");
  CHECK(p["result"]["contract"]["ok"] == true);
  auto beats = e.d.CliJson({"inbox", "--types", "heartbeat"});
  CHECK(beats["messages"].size() >= 3);  // heartbeats kept coming while the answer streamed
}

TEST_CASE("a 300 KiB brief reaches qwen whole (stdin, no E2BIG)", "[e2e][e2e-more]") {
  E2eDaemon e;
  std::string t = Terminal(e, "qwen");
  std::string brief;
  for (int i = 0; brief.size() < 300 * 1024; ++i)
    brief += "Context line " + std::to_string(i) + ": " + std::string(60, 'x') + "\n";
  brief += "End of the brief. MOCK:contract\n";
  json p = RunTask(e, t, brief);
  INFO(p.dump(2));
  CHECK(p["outcome"] == "succeeded");
  CHECK(e.MaxUserBytes() >= 300 * 1024);
}

TEST_CASE("provider 500 / 429 / 401 are classified and the CLI is not left retrying",
          "[e2e]") {
  E2eDaemon e;
  std::string t = Terminal(e, "claude");
  auto start = std::chrono::steady_clock::now();
  json p500 = RunTask(e, t, "MOCK:http500\n");
  CHECK(p500["failure_kind"] == "provider_unavailable");
  CHECK(p500["failure_class"] == "operational");
  json p401 = RunTask(e, t, "MOCK:http401\n");
  CHECK(p401["failure_kind"] == "auth_error");
  auto esc = e.d.CliJson({"inbox", "--types", "escalation"});
  bool urgent = false;
  for (const auto& m : esc["messages"]) urgent |= m["priority"] == "urgent";
  CHECK(urgent);  // a bad key escalates at once
  json p429 = RunTask(e, t, "MOCK:http429\n");
  CHECK(p429["failure_kind"] == "rate_limited");
  CHECK(!e.d.CliJson({"status"})["cooldowns"].empty());
  CHECK(std::chrono::steady_clock::now() - start < 120s);  // no minutes-long CLI retry loops
  CHECK(e.MockRequests() <= 12);
}

TEST_CASE("a test run printing 401 / connection refused is not a provider failure", "[e2e]") {
  E2eDaemon e;
  std::string t = Terminal(e, "claude");
  json p = RunTask(e, t,
                   "Run the tests.\nMOCK:tool_worker_done CMD: echo 'curl: (7) Failed to connect: "
                   "Connection refused'; echo 'HTTP/1.1 401 Unauthorized'\n");
  INFO(p.dump(2));
  CHECK(p["outcome"] == "succeeded");
  CHECK(p["failure_kind"] == "");
}

TEST_CASE("codex: a 500 from the provider is classified", "[e2e]") {
  E2eDaemon e;
  std::string t = Terminal(e, "codex");
  json ok = RunTask(e, t, "MOCK:contract\n");
  CHECK(ok["outcome"] == "succeeded");
  json p500 = RunTask(e, t, "MOCK:http500\n");
  CHECK(p500["failure_kind"] == "provider_unavailable");
}

TEST_CASE("a claude reviewer round returns findings", "[e2e]") {
  E2eDaemon e;
  auto r = e.d.CliJson({"review", "start", "--artifact", "-", "--writer-family", "openai",
                        "--mode", "simple", "--primary", "claude"},
                       "diff --git a/a.cpp b/a.cpp\n+int x = y / 0;\nMOCK:findings\n");
  auto done = e.d.CliJson({"review", "wait", r["id"].get<std::string>(), "--timeout-ms", "300000"});
  INFO(done.dump(2));
  REQUIRE(done["status"] == "done");
  REQUIRE(done["rounds"].size() == 1);
  CHECK(done["rounds"][0]["state"] == "done");
  CHECK(!done["rounds"][0]["findings"].empty());
  CHECK(done["verdict"] != "gate-absent");
  CHECK(done["verdict"] != "APPROVED");  // the mock's finding is HIGH, from a foreign family
}

TEST_CASE("a codex reviewer round returns findings", "[e2e]") {
  E2eDaemon e;
  auto r = e.d.CliJson({"review", "start", "--artifact", "-", "--writer-family", "anthropic",
                        "--mode", "simple", "--primary", "codex"},
                       "diff --git a/a.cpp b/a.cpp\n+for (int i = 0; i <= n; ++i) sum += a[i];\n"
                       "MOCK:findings\n");
  auto done = e.d.CliJson({"review", "wait", r["id"].get<std::string>(), "--timeout-ms", "300000"});
  INFO(done.dump(2));
  REQUIRE(done["status"] == "done");
  REQUIRE(done["rounds"].size() == 1);
  CHECK(done["rounds"][0]["family"] == "openai");
  CHECK(done["rounds"][0]["state"] == "done");
  REQUIRE(!done["rounds"][0]["findings"].empty());
  CHECK(done["verdict"] != "gate-absent");
  CHECK(done["verdict"] != "APPROVED");
}

TEST_CASE("codex as the reviewer: the daemon's schema file and read-only sandbox, parsed findings",
          "[e2e]") {
  E2eDaemon e;
  // The codex template, the answer format, --output-schema <the daemon's schema file> and
  // --sandbox read-only: a flag codex refused, or a brief it misread, would end gate-absent.
  auto r = e.d.CliJson({"review", "start", "--artifact", "-", "--writer-family", "anthropic",
                        "--mode", "simple", "--primary", "codex"},
                       "diff --git a/a.cpp b/a.cpp\n+for (int i = 0; i <= n; ++i) sum += v[i];\n"
                       "MOCK:findings\n");
  auto done = e.d.CliJson({"review", "wait", r["id"].get<std::string>(), "--timeout-ms", "300000"});
  INFO(done.dump(2));
  REQUIRE(done["status"] == "done");
  REQUIRE(done["rounds"].size() == 1);
  CHECK(done["rounds"][0]["state"] == "done");
  CHECK(done["rounds"][0]["family"] == "openai");
  CHECK(done["rounds"][0]["model"] == "gpt-5.5");
  REQUIRE(done["findings"].size() == 1);
  CHECK(done["findings"][0]["id"] == "r0.openai.F1");
  CHECK(done["findings"][0]["severity"] == "HIGH");
  CHECK(done["verdict"] == "BLOCKED");  // a foreign HIGH
  auto task = e.d.CliJson({"task", "show", done["rounds"][0]["task_id"].get<std::string>()});
  REQUIRE(!task["dispatches"].empty());
  std::string dispatch = task["dispatches"][0]["id"];
  std::ifstream schema(e.d.state_dir() + "/dispatches/" + dispatch + "/findings_schema.json");
  json s = json::parse(schema, nullptr, false);
  CHECK(s["properties"]["findings"]["items"]["properties"]["stance"]["enum"].size() == 6);
}

TEST_CASE("the DeepSeek-style profile (claude CLI, other endpoint) is another family", "[e2e]") {
  E2eDaemon e;
  std::string t = Terminal(e, "deepseek-flash");
  CHECK(e.d.CliJson({"terminal", "show", t})["family"] == "deepseek");
  json p = RunTask(e, t, "MOCK:contract\n");
  CHECK(p["outcome"] == "succeeded");
  CHECK(p["cost_estimated"] == true);  // priced from usage × the profile's table, not Anthropic's
  // It may review claude's work; claude may not.
  RunResult same = e.d.Cli({"review", "start", "--artifact", "-", "--writer-family", "anthropic",
                            "--mode", "simple", "--primary", "claude"}, "x");
  CHECK(same.exit_code == 1);
  auto cross = e.d.CliJson({"review", "start", "--artifact", "-", "--writer-family", "anthropic",
                            "--mode", "simple", "--primary", "deepseek-flash"},
                           "diff\nMOCK:findings\n");
  auto done = e.d.CliJson({"review", "wait", cross["id"].get<std::string>(), "--timeout-ms", "300000"});
  CHECK(done["rounds"][0]["family"] == "deepseek");
  CHECK(done["rounds"][0]["state"] == "done");
}

// Issue 14: the whole loop with real CLIs. claude implements in the flow's worktree through its
// shell tool (the file it writes carries the marker that makes the mock's review approve), the
// shell profile verifies, the real codex reviews the branch's diff from another family.
TEST_CASE("a flow with the real claude as writer and the real codex as reviewer reaches ready",
          "[e2e]") {
  E2eDaemon e(json{{"flow", {{"worktree_root", "/tmp/conclave-e2e-wt-" + std::to_string(getpid())}}}});
  std::string repo = e.d.dir() + "/repo";
  std::filesystem::create_directories(repo);
  for (std::vector<std::string> argv : std::vector<std::vector<std::string>>{
           {"init", "-q", "-b", "main"},
           {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty",
            "-m", "init"}}) {
    argv.insert(argv.begin(), {"/usr/bin/git", "-C", repo});
    REQUIRE(conclave::testing::RunProgram(argv).exit_code == 0);
  }
  auto f = e.d.CliJson({"flow", "start", "--repo", repo, "--brief", "-", "--writer", "claude",
                        "--review", "simple", "--reviewer", "codex", "--verify", "test -s hello.txt"},
                       "Add a greeting file.\nMOCK:tool_worker_done CMD: echo 'greeting MOCK:findings_none' "
                       "> hello.txt\n");
  std::string id = f["id"];
  auto r = e.d.Cli({"--json", "flow", "wait", id, "--timeout-ms", "600000"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  json done = r.Json();
  CHECK(done["status"] == "ready");
  CHECK(done["implement_runs"] == 1);
  CHECK(done["verify_runs"] == 1);
  CHECK(done["review_verdict"] == "APPROVED");
  auto review = e.d.CliJson({"review", "show", done["review_id"].get<std::string>()});
  REQUIRE(!review["rounds"].empty());
  CHECK(review["rounds"][0]["family"] == "openai");
  CHECK(review["rounds"][0]["state"] == "done");
  auto shown = conclave::testing::RunProgram(
      {"/usr/bin/git", "-C", repo, "show", done["branch"].get<std::string>() + ":hello.txt"});
  CHECK(shown.out == "greeting MOCK:findings_none\n");
  e.d.CliJson({"flow", "clean", id});
}
