// Integration: the failure policy — counted vs operational failures, the 5-same-fingerprint
// circuit breaker, re-plans, rate-limit cooldowns and budget caps, through a real daemon.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <set>

#include "daemon_fixture.h"

using conclave::testing::DaemonFixture;
using conclave::testing::RunResult;
using conclave::testing::WaitFor;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

void Start(DaemonFixture& d, json extra_config = json::object()) {
  json cfg = {{"retry", {{"base_ms", 50}, {"max_ms", 200}, {"max_attempts", 4}}}};
  cfg.update(extra_config);
  std::string path = d.WriteFile("config.json", cfg.dump());
  d.WriteProfile("fake", d.FakeProfile("fake", "fakefam"));
  d.WriteProfile("other", d.FakeProfile("other", "otherfam"));
  d.Start({"--config", path});
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  d.Cli({"terminal", "create", "--profile", "other", "--handle", "w2", "--cwd", d.dir()});
}

std::string Task(DaemonFixture& d, const std::string& brief, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"task", "create", "--brief", "-"};
  args.insert(args.end(), extra.begin(), extra.end());
  return d.CliJson(args, brief)["task"]["id"].get<std::string>();
}

json Show(DaemonFixture& d, const std::string& id) { return d.CliJson({"task", "show", id}); }

// Waits until the task reaches one of the statuses.
json WaitStatus(DaemonFixture& d, const std::string& id, std::set<std::string> want) {
  json last;
  bool ok = WaitFor(
      [&] {
        last = Show(d, id);
        return want.count(last["task"]["status"].get<std::string>()) > 0;
      },
      60s);
  INFO(last.dump(1));
  REQUIRE(ok);
  return last;
}

}  // namespace

TEST_CASE("five identical counted failures open the breaker — a sixth dispatch is refused",
          "[failure]") {
  DaemonFixture d;
  Start(d);
  std::string seq = d.dir() + "/seq";
  std::string id = Task(d, "FAKE: sequence " + seq + " fail:test_parse failed in parser.cpp line 42\n",
                        {"--auto-retry", "10", "--hypothesis", "the tokenizer drops quotes"});
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  json t = WaitStatus(d, id, {"blocked"});
  CHECK(t["task"]["blocked_reason"] == "circuit_open");
  REQUIRE(t["dispatches"].size() == 5);
  std::string fp = t["dispatches"][0]["fingerprint"];
  CHECK(!fp.empty());
  for (const auto& a : t["dispatches"]) {
    CHECK(a["failure_class"] == "counted");
    CHECK(a["fingerprint"] == fp);       // pids and addresses differ; the cause does not
    CHECK(a["terminal"] == "w1");        // attempts stay on the same terminal
  }
  auto esc = d.CliJson({"inbox", "--task", id, "--types", "escalation"});
  REQUIRE(!esc["messages"].empty());
  CHECK(esc["messages"][0]["priority"] == "urgent");
  json payload = json::parse(esc["messages"][0]["payload_json"].get<std::string>());
  CHECK(payload["fingerprint"] == fp);
  CHECK(payload["consecutive"] == 5);
  CHECK(payload["attempts"].size() == 5);
  CHECK(payload["hypothesis"] == "the tokenizer drops quotes");
  RunResult sixth = d.Cli({"dispatch", "--task", id, "--to", "w1"});
  CHECK(sixth.exit_code == 1);
  CHECK(sixth.err.find("failed precondition") != std::string::npos);
  CHECK(sixth.err.find("re-plan") != std::string::npos);
  // Moving to another model is not a re-plan.
  CHECK(d.Cli({"dispatch", "--task", id, "--to", "w2"}).exit_code == 1);
  d.CliJson({"task", "update", id, "--title", "renamed"});
  CHECK(Show(d, id)["task"]["status"] == "blocked");
  // A changed hypothesis is: the breaker closes and the task can run again.
  d.CliJson({"task", "update", id, "--hypothesis", "the lexer, not the tokenizer"});
  json after = Show(d, id);
  CHECK(after["task"]["status"] == "ready");
  CHECK(after["task"]["breaker_count"] == 0);
  CHECK(d.Cli({"dispatch", "--task", id, "--to", "w1"}).exit_code == 0);
  d.CliJson({"task", "cancel", id});
}

TEST_CASE("a different fingerprint in between resets the consecutive count", "[failure]") {
  DaemonFixture d;
  Start(d);
  std::string seq = d.dir() + "/seq";
  // A A A B A A A A A: the breaker opens only at the 5th A after B (9 attempts).
  std::string steps = "fail:assert x == 1|fail:assert x == 1|fail:assert x == 1|"
                      "fail:segfault in alloc|fail:assert x == 1";
  std::string id = Task(d, "FAKE: sequence " + seq + " " + steps + "\n", {"--auto-retry", "20"});
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  json t = WaitStatus(d, id, {"blocked"});
  CHECK(t["dispatches"].size() == 9);
  CHECK(t["dispatches"][2]["fingerprint"] == t["dispatches"][0]["fingerprint"]);
  CHECK(t["dispatches"][3]["fingerprint"] != t["dispatches"][0]["fingerprint"]);
  CHECK(t["dispatches"][8]["fingerprint"] == t["dispatches"][0]["fingerprint"]);
}

TEST_CASE("an operational failure in between neither counts nor resets", "[failure]") {
  DaemonFixture d;
  Start(d);
  std::string seq = d.dir() + "/seq";
  // A A (hang → timeout, operational, retried by the daemon) A A A → open after 6 attempts.
  std::string steps = "fail:lint error E501|fail:lint error E501|hang|fail:lint error E501";
  std::string id = Task(d, "FAKE: sequence " + seq + " " + steps + "\n", {"--auto-retry", "20"});
  d.CliJson({"dispatch", "--task", id, "--to", "w1", "--timeout-s", "1"});
  json t = WaitStatus(d, id, {"blocked"});
  INFO("dispatches: " << t["dispatches"].dump());
  REQUIRE(t["dispatches"].size() == 6);
  CHECK(t["dispatches"][2]["failure_kind"] == "timeout");
  CHECK(t["dispatches"][2]["failure_class"] == "operational");
  CHECK(t["dispatches"][2]["fingerprint"] == "");
  CHECK(t["task"]["breaker_count"] == 5);
}

TEST_CASE("operational failures retry with backoff, bounded, then escalate", "[failure]") {
  DaemonFixture d;
  Start(d);
  std::string seq = d.dir() + "/seq";
  std::string id = Task(d, "FAKE: sequence " + seq + " hang\n");
  d.CliJson({"dispatch", "--task", id, "--to", "w1", "--timeout-s", "1"});
  json t = WaitStatus(d, id, {"failed"});
  CHECK(t["dispatches"].size() == 4);  // max_attempts counts the first try
  for (const auto& a : t["dispatches"]) CHECK(a["failure_kind"] == "timeout");
  // Retries waited for their backoff.
  for (size_t i = 1; i < t["dispatches"].size(); ++i) {
    CHECK(std::stoll(t["dispatches"][i]["not_before_unix_ms"].get<std::string>()) > 0);
  }
  auto esc = d.CliJson({"inbox", "--task", id, "--types", "escalation"});
  CHECK(!esc["messages"].empty());
}

TEST_CASE("budget caps: a spent task cap refuses the next dispatch — a run past its cap stops",
          "[failure]") {
  DaemonFixture d;
  Start(d);
  std::string id = Task(d, "FAKE: cost 0.60\nFAKE: status FAIL\nFAKE: blockers flaky\n",
                        {"--budget-usd", "0.5"});
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  // The run passes the task's cap: it is stopped (failed) unless it exited first (ready).
  json t = WaitStatus(d, id, {"ready", "failed"});
  CHECK(t["task"]["spent_usd"].get<double>() == Approx(0.60));
  RunResult refused = d.Cli({"dispatch", "--task", id, "--to", "w1"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("resource exhausted") != std::string::npos);
  CHECK(refused.err.find("per-task cap") != std::string::npos);

  std::string over = Task(d, "FAKE: cost 0.25\nFAKE: hang\n");
  d.CliJson({"dispatch", "--task", over, "--to", "w1", "--budget-usd", "0.10"});
  json o = WaitStatus(d, over, {"failed"});
  CHECK(o["dispatches"][0]["failure_kind"] == "budget_exceeded");
  CHECK(o["dispatches"][0]["cost_usd"].get<double>() == Approx(0.25));
  // Today's spend of the family is what both runs cost.
  auto status = d.CliJson({"status"});
  double today = -1;
  for (const auto& s : status["spend"]) {
    if (s["cap"] == "family:fakefam:today") today = s["spent_usd"].get<double>();
  }
  CHECK(today == Approx(0.85));
}

TEST_CASE("a rate-limit puts the profile in cooldown: its queue waits, its family moves on",
          "[failure]") {
  DaemonFixture d;
  json cfg = {{"retry", {{"base_ms", 50}, {"max_ms", 200}, {"max_attempts", 4}}}};
  for (const char* name : {"limited", "spare"}) {
    auto p = d.FakeProfile(name, "claudefam");
    p["parser"] = "claude-json";
    d.WriteProfile(name, p);
  }
  d.Start({"--config", d.WriteFile("config.json", cfg.dump())});
  d.Cli({"terminal", "create", "--profile", "limited", "--handle", "l1", "--cwd", d.dir()});
  d.Cli({"terminal", "create", "--profile", "spare", "--handle", "s1", "--cwd", d.dir()});
  const std::string limited =
      R"(json:{"type":"result","subtype":"success","is_error":true,"api_error_status":429,)"
      R"("result":"API Error: Request rejected (429) Rate limit exceeded, retry after 3s",)"
      R"("total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}})";
  const std::string ok =
      R"(json:{"type":"result","subtype":"success","is_error":false,"result":"SUMMARY: PASS ok\nEVIDENCE: e\nCHANGES: none\nRISKS: none\nBLOCKERS: none",)"
      R"("total_cost_usd":0.02,"usage":{"input_tokens":10,"output_tokens":5}})";
  std::string seq = d.dir() + "/seq";
  std::string a = Task(d, "FAKE: sequence " + seq + " " + limited + "|" + ok + "\n");
  auto started = std::chrono::steady_clock::now();
  d.CliJson({"dispatch", "--task", a, "--to", "@profile:limited"});
  // The first attempt is rate-limited: the profile cools down, visibly.
  json first;
  REQUIRE(WaitFor([&] {
    first = Show(d, a);
    return !first["dispatches"].empty() && first["dispatches"][0]["state"] == "failed";
  }, 20s));
  CHECK(first["dispatches"][0]["failure_kind"] == "rate_limited");
  CHECK(first["dispatches"][0]["failure_class"] == "operational");
  auto status = d.CliJson({"status"});
  REQUIRE(status["cooldowns"].size() == 1);
  CHECK(status["cooldowns"][0]["profile"] == "limited");
  auto profiles = d.CliJson({"profile", "list"});
  for (const auto& p : profiles["profiles"]) {
    if (p["name"] == "limited") CHECK(p["cooldown_until_unix_ms"] != "0");
  }
  // Work for the cooling profile waits in the queue; @family work goes to the other profile.
  std::string b = Task(d, "plain\n");
  CHECK(d.CliJson({"dispatch", "--task", b, "--to", "@profile:limited"})["state"] == "queued");
  std::string c = Task(d, "FAKE: sequence " + d.dir() + "/seq2 " + ok + "\n");
  auto moved = d.CliJson({"dispatch", "--task", c, "--to", "@family:claudefam"});
  CHECK(moved["state"] == "running");
  CHECK(moved["terminal"] == "s1");
  // After the retry-after hint the retry and the queued task run on the limited profile.
  json done = WaitStatus(d, a, {"completed"});
  CHECK(std::chrono::steady_clock::now() - started >= 3s);
  CHECK(done["dispatches"].size() == 2);
  CHECK(done["dispatches"][1]["cost_usd"].get<double>() == Approx(0.02));
  CHECK(done["dispatches"][1]["cost_estimated"] == false);
  WaitStatus(d, b, {"completed", "ready"});
}

TEST_CASE("per-family daily and per-session caps refuse new work, naming the cap", "[failure]") {
  DaemonFixture d;
  Start(d, {{"budgets", {{"per_family_daily_usd", {{"fakefam", 0.5}}}, {"per_session_usd", 1.0}}}});
  std::string a = Task(d, "FAKE: cost 0.70\nFAKE: status FAIL\n", {"--session", "s1"});
  d.CliJson({"dispatch", "--task", a, "--to", "w1"});
  WaitStatus(d, a, {"ready"});
  RunResult fam = d.Cli({"dispatch", "--task", a, "--to", "w1"});
  CHECK(fam.exit_code == 1);
  CHECK(fam.err.find("daily cap of family fakefam") != std::string::npos);
  // Another family still has budget, until the session's cap is spent.
  d.CliJson({"dispatch", "--task", a, "--to", "w2"});
  json t = WaitStatus(d, a, {"ready"});
  CHECK(t["task"]["spent_usd"].get<double>() == Approx(1.4));
  RunResult ses = d.Cli({"dispatch", "--task", a, "--to", "w2"});
  CHECK(ses.exit_code == 1);
  CHECK(ses.err.find("per-session cap of session s1") != std::string::npos);
  auto status = d.CliJson({"status"});
  bool shown = false;
  for (const auto& s : status["spend"]) shown |= s["cap"] == "family:fakefam:today";
  CHECK(shown);
}

TEST_CASE("a task's budget caps its running dispatch too", "[failure]") {
  DaemonFixture d;
  Start(d);
  std::string id = Task(d, "FAKE: cost 0.40\nFAKE: hang\n", {"--budget-usd", "0.3"});
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  json t = WaitStatus(d, id, {"failed"});
  CHECK(t["dispatches"][0]["failure_kind"] == "budget_exceeded");
  CHECK(t["dispatches"][0]["cost_usd"].get<double>() == Approx(0.40));
}

TEST_CASE("a worker that reports BLOCKED asks through a gate, and the answer re-runs it uncounted",
          "[failure]") {
  DaemonFixture d;
  Start(d);
  std::string id = Task(d,
                        "Migrate the schema.\n"
                        "FAKE: if-unanswered status BLOCKED\n"
                        "FAKE: if-unanswered blockers staging or prod? the brief names neither\n"
                        "FAKE: if-answered print went ahead with the answer\n",
                        {"--auto-retry", "3"});
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  json t = WaitStatus(d, id, {"blocked"});
  CHECK(t["task"]["blocked_reason"] == "worker_blocked");
  REQUIRE(t["dispatches"].size() == 1);  // a question is not auto-retried
  CHECK(t["dispatches"][0]["failure_kind"] == "worker_blocked");
  CHECK(t["dispatches"][0]["failure_class"] == "");
  CHECK(d.CliJson({"terminal", "show", "w1"})["state"] == "idle");
  // The coordinator is asked, with the worker's words, through an open gate on the task.
  auto asks = d.CliJson({"inbox", "--types", "decision_gate"})["messages"];
  REQUIRE(asks.size() == 1);
  CHECK(asks[0]["body"].get<std::string>().find("staging or prod?") != std::string::npos);
  REQUIRE(t["gates"].size() == 1);
  std::string gate = t["gates"][0]["id"].get<std::string>();
  // Nothing runs until it is answered.
  CHECK(d.Cli({"dispatch", "--task", id, "--to", "w1"}).exit_code == 1);
  d.CliJson({"gate", "resolve", gate, "--decision", "staging", "--reason", "prod is frozen"});
  t = WaitStatus(d, id, {"completed", "failed", "blocked"});
  CHECK(t["task"]["status"] == "completed");
  CHECK(t["task"]["brief"].get<std::string>().find("## Answer to your BLOCKERS (gate " + gate +
                                                   ")\nstaging\nprod is frozen") !=
        std::string::npos);
  REQUIRE(t["dispatches"].size() == 2);
  CHECK(t["dispatches"][1]["terminal"] == "w1");
  CHECK(t["task"]["breaker_count"] == 0);
  // The re-run read the answer in its brief (the fake worker's if-answered branch ran).
  CHECK(t["task"]["result_json"].get<std::string>().find("went ahead with the answer") !=
        std::string::npos);
}

TEST_CASE("dependants of a failed task are blocked (dependency_failed) and resume after a re-run",
          "[failure]") {
  DaemonFixture d;
  Start(d, {{"retry", {{"base_ms", 50}, {"max_ms", 200}, {"max_attempts", 1}}}});
  // Times out on its first run (operational, retries used up), succeeds on the second.
  std::string a = Task(d, "FAKE: sequence " + d.dir() + "/seq hang|ok\n");
  std::string b = Task(d, "after a\n", {"--deps", a});
  std::string c = Task(d, "after b\n", {"--deps", b});
  std::string cancelled = Task(d, "never runs\n");
  std::string e = Task(d, "after the cancelled one\n", {"--deps", cancelled});
  d.CliJson({"task", "cancel", cancelled});
  CHECK(WaitStatus(d, e, {"blocked"})["task"]["blocked_reason"] == "dependency_failed");
  d.CliJson({"dispatch", "--task", a, "--to", "w1", "--timeout-s", "1"});
  CHECK(WaitStatus(d, a, {"failed", "completed"})["task"]["status"] == "failed");
  for (const auto& id : {b, c}) {
    json t = WaitStatus(d, id, {"blocked"});
    CHECK(t["task"]["blocked_reason"] == "dependency_failed");
  }
  auto esc = d.CliJson({"inbox", "--types", "escalation", "--limit", "50"})["messages"];
  int about = 0;
  for (const auto& m : esc) {
    about += m["subject"].get<std::string>().find("a dependency failed") != std::string::npos;
  }
  CHECK(about == 3);  // e, b and c
  CHECK(d.Cli({"dispatch", "--task", b, "--to", "w1"}).exit_code == 1);
  // a runs again and completes: b becomes ready, c waits for b again.
  d.CliJson({"dispatch", "--task", a, "--to", "w1"});
  CHECK(WaitStatus(d, a, {"completed", "failed"})["task"]["status"] == "completed");
  CHECK(WaitStatus(d, b, {"ready"})["task"]["blocked_reason"] == "");
  CHECK(Show(d, c)["task"]["status"] == "pending");
}
