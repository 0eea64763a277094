// End-to-end: the real, unmodified model CLIs (installed from npm by install-clis.sh) driven
// by a real conclaved, inside a loopback-only network namespace, against the local mock
// provider. Nothing here can reach a real provider: the namespace has no route off the box.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "daemon_fixture.h"

using conclave::testing::DaemonFixture;
using conclave::testing::RunProgram;
using conclave::testing::RunResult;
using conclave::testing::WaitFor;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

const std::string kE2eDir = std::string(CONCLAVE_SOURCE_DIR) + "/tests/e2e";

// Installs (or finds) the pinned CLIs; "" when npm cannot reach its registry.
std::string CliBinDir() {
  static std::string dir = [] {
    const char* c = std::getenv("CONCLAVE_E2E_CACHE");
    const char* home = std::getenv("HOME");
    std::string cache = c ? c : std::string(home ? home : "/tmp") + "/.cache/conclave-e2e";
    RunResult r = RunProgram({"/bin/bash", kE2eDir + "/install-clis.sh", cache});
    if (r.exit_code == 77) return std::string();
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::string out = r.out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }();
  return dir;
}

// A daemon (with the mock) in its own loopback-only namespace; shipped profiles.
struct E2eDaemon {
  DaemonFixture d;
  std::string prefix;
  bool ready = false;

  explicit E2eDaemon(json config = json::object()) {
    std::string bin = CliBinDir();
    if (bin.empty()) {
      WARN("npm registry unreachable: the real CLIs cannot be installed, end-to-end test not run");
      return;
    }
    prefix = d.dir() + "/e2e";
    std::string build_dir = std::string(CONCLAVE_BIN).substr(0, std::string(CONCLAVE_BIN).rfind('/'));
    const char* path = std::getenv("PATH");
    std::vector<std::string> launcher = {"/usr/bin/unshare", geteuid() == 0 ? "-n" : "-rn",
                                         "/bin/bash", kE2eDir + "/netns-daemon.sh", prefix};
    d.SetLauncher(launcher, {"PATH=" + bin + ":" + build_dir + ":" + (path ? path : "/usr/bin:/bin")});
    // The shipped profiles, exactly as installed.
    std::filesystem::remove_all(d.profiles_dir());
    std::filesystem::copy(std::string(CONCLAVE_SOURCE_DIR) + "/profiles", d.profiles_dir(),
                          std::filesystem::copy_options::recursive);
    json cfg = {{"retry", {{"base_ms", 200}, {"max_ms", 1000}, {"max_attempts", 1}}},
                {"review", {{"round_timeout_s", 240}}}};
    cfg.update(config);
    d.Start({"--config", d.WriteFile("config.json", cfg.dump())});
    ready = true;
  }
  ~E2eDaemon() {
    if (!ready) return;
    d.Stop();
    pid_t mock = 0;
    std::ifstream(prefix + ".mock.pid") >> mock;
    if (mock > 0) kill(mock, SIGKILL);
  }
  int MockRequests() {
    std::ifstream in(prefix + ".mock.log");
    std::string line;
    int n = 0;
    while (std::getline(in, line)) n += line.find("POST") != std::string::npos ? 1 : 0;
    return n;
  }
};

std::string Terminal(E2eDaemon& e, const std::string& profile) {
  return e.d.CliJson({"terminal", "create", "--profile", profile, "--handle", "t-" + profile,
                      "--cwd", e.d.dir()})["handle"];
}

json RunTask(E2eDaemon& e, const std::string& terminal, const std::string& brief,
             std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"task", "create", "--brief", "-", "--role", "tester"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::string id = e.d.CliJson(args, brief)["task"]["id"];
  e.d.CliJson({"dispatch", "--task", id, "--to", terminal});
  for (std::string after = "0";;) {
    auto r = e.d.CliJson({"wait", "--task", id, "--types", "worker_done", "--after", after,
                          "--timeout-ms", "300000"});
    REQUIRE(!r["messages"].empty());
    for (const auto& m : r["messages"]) {
      if (m["from"] == "conclaved") return json::parse(m["payload_json"].get<std::string>());
    }
    after = r["cursor"];
  }
}

void DispatchEndsInWorkerDone(const std::string& profile, const std::string& family) {
  E2eDaemon e;
  if (!e.ready) return;
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

// The CLI itself runs `conclave send --type worker_done` through its shell tool; the daemon
// binds the report to the attempt by the token in the CLI's environment.
void CliReportsItself(const std::string& profile) {
  E2eDaemon e;
  if (!e.ready) return;
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

TEST_CASE("claude runs `conclave send --type worker_done` itself with its dispatch token", "[e2e]") {
  CliReportsItself("claude");
}

TEST_CASE("codex runs `conclave send --type worker_done` itself too", "[e2e]") {
  CliReportsItself("codex");
}

TEST_CASE("provider 500 / 429 / 401 are classified and the CLI is not left retrying",
          "[e2e]") {
  E2eDaemon e;
  if (!e.ready) return;
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

TEST_CASE("codex: a 500 from the provider is classified, its spurious error item is not",
          "[e2e]") {
  E2eDaemon e;
  if (!e.ready) return;
  std::string t = Terminal(e, "codex");
  json ok = RunTask(e, t, "MOCK:contract\n");
  CHECK(ok["outcome"] == "succeeded");
  json p500 = RunTask(e, t, "MOCK:http500\n");
  CHECK(p500["failure_kind"] == "provider_unavailable");
}

TEST_CASE("a claude reviewer round returns structured findings", "[e2e]") {
  E2eDaemon e;
  if (!e.ready) return;
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

TEST_CASE("codex as the reviewer: the daemon's schema file and read-only sandbox, parsed findings",
          "[e2e]") {
  E2eDaemon e;
  if (!e.ready) return;
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
  std::ifstream schema(e.d.state_dir() + "/dispatches/" + dispatch + "/findings-schema.json");
  json s = json::parse(schema, nullptr, false);
  CHECK(s["properties"]["findings"]["items"]["properties"]["stance"]["enum"].size() == 6);
}

TEST_CASE("the DeepSeek-style profile (claude CLI, other endpoint) is another family", "[e2e]") {
  E2eDaemon e;
  if (!e.ready) return;
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
