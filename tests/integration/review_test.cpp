// Integration: whole reviews through the daemon — every round a real dispatch to a scripted
// fake reviewer of a given family (FAKE-REVIEW lines in the artifact script each reviewer).
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "daemon_fixture.h"

using conclave::testing::DaemonFixture;
using conclave::testing::RunResult;
using json = nlohmann::json;

namespace {

// Profiles: prim (anthropic, the writer's family), chal (openai), third (deepseek).
void Start(DaemonFixture& d, json extra = json::object()) {
  json cfg = {{"retry", {{"base_ms", 50}, {"max_ms", 200}, {"max_attempts", 1}}},
              {"review", {{"default_cap", 2}, {"round_timeout_s", 2}}}};
  cfg.update(extra);
  for (auto [name, fam] : std::vector<std::pair<std::string, std::string>>{
           {"prim", "anthropic"}, {"chal", "openai"}, {"third", "deepseek"}}) {
    auto p = d.FakeProfile(name, fam, 4);
    p["env"] = {{"FAKE_FAMILY", fam}};
    d.WriteProfile(name, p);
  }
  d.Start({"--config", d.WriteFile("config.json", cfg.dump())});
}

std::string F(const std::string& id, const std::string& sev, const std::string& stance,
              const std::string& path = "src/a.cpp", int line = 10,
              const std::string& cat = "correctness") {
  return json({{"id", id}, {"severity", sev}, {"category", cat},
               {"location", {{"path", path}, {"line", line}}}, {"title", id + " title"},
               {"detail", "detail"}, {"stance", stance}, {"refs", json::array()}})
      .dump();
}

json StartReview(DaemonFixture& d, const std::string& artifact, std::vector<std::string> args) {
  std::vector<std::string> a = {"review", "start", "--artifact", "-", "--writer-family", "anthropic"};
  a.insert(a.end(), args.begin(), args.end());
  return d.CliJson(a, artifact);
}

json Wait(DaemonFixture& d, const json& review) {
  auto r = d.CliJson({"review", "wait", review["id"].get<std::string>(), "--timeout-ms", "60000"});
  REQUIRE(r["status"] == "done");
  return r;
}

std::string Script(std::vector<std::string> lines) {
  std::string s = "diff --git a/src/a.cpp b/src/a.cpp\n+int x = 1;\n";
  for (const auto& l : lines) s += l + "\n";
  return s;
}

}  // namespace

TEST_CASE("a debate that converges in round 3", "[review]") {
  DaemonFixture d;
  Start(d);
  // Answers name the daemon's full ids (r<round>.<family>.<id>).
  auto art = Script({"FAKE-REVIEW anthropic 0 json [" + F("F1", "MEDIUM", "new") + "]",
                     "FAKE-REVIEW openai 1 json [" + F("r0.anthropic.F1", "MEDIUM", "agree") + "," +
                         F("F2", "LOW", "new", "src/b.cpp", 5, "docs") + "]",
                     "FAKE-REVIEW anthropic 2 json [" +
                         F("r1.openai.F2", "LOW", "agree", "src/b.cpp", 5, "docs") + "," +
                         F("F3", "INFO", "new", "src/c.cpp", 1, "maintainability") + "]",
                     "FAKE-REVIEW openai 3 json [" +
                         F("r2.anthropic.F3", "INFO", "agree", "src/c.cpp", 1, "maintainability") + "]"});
  auto r = Wait(d, StartReview(d, art, {"--mode", "debate", "--primary", "prim", "--challenger",
                                        "chal", "--cap", "3"}));
  CHECK(r["termination"] == "converged");
  REQUIRE(r["rounds"].size() == 4);
  CHECK(r["rounds"][1]["role"] == "challenger");
  CHECK(r["rounds"][1]["family"] == "openai");
  CHECK(r["verdict"] == "NEEDS_CHANGES");  // MEDIUM/LOW findings stay open
  bool both = false;
  for (const auto& f : r["findings"]) {
    both |= f["id"] == "r0.anthropic.F1" && f["disposition"] == "adopted_both";
  }
  CHECK(both);
  RunResult human = d.Cli({"review", "show", r["id"].get<std::string>()});
  CHECK(human.out.find("round 3 challenger chal (openai)") != std::string::npos);
}

TEST_CASE("a debate stuck on the same disagreement stops early: no_movement", "[review]") {
  DaemonFixture d;
  Start(d);
  auto art = Script({"FAKE-REVIEW anthropic 0 json [" + F("F1", "HIGH", "new") + "]",
                     "FAKE-REVIEW anthropic * json [" + F("r0.anthropic.F1", "HIGH", "agree") + "]",
                     "FAKE-REVIEW openai * json [" + F("r0.anthropic.F1", "HIGH", "rebut") + "]"});
  auto r = Wait(d, StartReview(d, art, {"--mode", "debate", "--primary", "prim", "--challenger",
                                        "chal", "--cap", "5"}));
  CHECK(r["termination"] == "no_movement");
  CHECK(r["rounds"].size() == 5);  // rounds 0-4: stopped long before the cap of 5 challenges
}

TEST_CASE("a debate that hits its cap is an adversarial stalemate with a decision gate",
          "[review]") {
  DaemonFixture d;
  Start(d);
  auto art = Script({"FAKE-REVIEW anthropic 0 json [" + F("F1", "HIGH", "new") + "]",
                     "FAKE-REVIEW anthropic * json [" + F("r0.anthropic.F1", "HIGH", "agree") + "]",
                     "FAKE-REVIEW openai * json [" + F("r0.anthropic.F1", "HIGH", "rebut") + "]"});
  auto r = Wait(d, StartReview(d, art, {"--mode", "debate", "--primary", "prim", "--challenger",
                                        "chal", "--cap", "1"}));
  CHECK(r["termination"] == "cap_reached");
  CHECK(r["verdict"] == "adversarial-stalemate");
  CHECK(r["rounds"].size() == 3);  // the primary answered the last challenge
  CHECK(r["gate_id"] != "0");
  auto gates = d.CliJson({"gate", "list", "--open"});
  REQUIRE(gates["gates"].size() == 1);
  CHECK(gates["gates"][0]["review_id"] == r["id"]);
  CHECK(!d.CliJson({"inbox", "--types", "escalation"})["messages"].empty());
  RunResult gate = d.Cli({"review", "gate", r["id"].get<std::string>()});
  CHECK(gate.exit_code == 5);
  CHECK(gate.err.find("adversarial-stalemate") != std::string::npos);
  // A person at a terminal signs the stalemate off: the review records it and changes.
  REQUIRE(std::filesystem::exists("/usr/bin/script"));  // util-linux: a pseudo-terminal
  RunResult human = conclave::testing::RunProgram(
      {"/usr/bin/script", "-qec",
       std::string(CONCLAVE_BIN) + " --socket " + d.socket() + " gate resolve " +
           r["gate_id"].get<std::string>() + " --decision accept-risk --reason weighed-it",
       "/dev/null"});
  REQUIRE(human.exit_code == 0);
  auto signed_off = d.CliJson({"review", "show", r["id"].get<std::string>()});
  CHECK(signed_off["verdict"] == "APPROVED_BY_SIGNOFF");
  REQUIRE(signed_off["signoffs"].size() == 1);
  CHECK(signed_off["signoffs"][0]["human"] == true);
  CHECK(signed_off["signoffs"][0]["verdict_before"] == "adversarial-stalemate");
  CHECK(d.Cli({"review", "gate", r["id"].get<std::string>()}).exit_code == 5);
  CHECK(d.Cli({"review", "gate", r["id"].get<std::string>(), "--accept-signoff"}).exit_code == 0);
}

TEST_CASE("a foreign BLOCKER keeps the gate shut until a re-gate with a fixed artifact",
          "[review]") {
  DaemonFixture d;
  Start(d);
  auto bad = Script({"FAKE-REVIEW openai * json [" +
                     F("B1", "BLOCKER", "new", "src/a.cpp", 2, "security") + "]"});
  auto r = Wait(d, StartReview(d, bad, {"--mode", "simple", "--primary", "chal"}));
  CHECK(r["verdict"] == "BLOCKED");
  std::string id = r["id"];
  RunResult shut = d.Cli({"review", "gate", id});
  CHECK(shut.exit_code == 5);
  CHECK(shut.err.find("B1") != std::string::npos);
  // The same artifact again is refused (no re-rolls); a fixed one, answered "fixed" by the
  // finding's own family, clears it.
  RunResult same = d.Cli({"review", "regate", id, "--artifact", "-"}, bad);
  CHECK(same.exit_code == 1);
  CHECK(same.err.find("identical") != std::string::npos);
  d.CliJson({"review", "regate", id, "--artifact", "-"},
            Script({"FAKE-REVIEW openai * json [" +
                    F("r0.openai.B1", "BLOCKER", "fixed", "src/a.cpp", 2, "security") + "]"}));
  auto fixed = Wait(d, json{{"id", id}});
  CHECK(fixed["verdict"] == "APPROVED");
  CHECK(fixed["revision"] == 2);
  CHECK(d.Cli({"review", "gate", id}).exit_code == 0);
}

TEST_CASE("the primary cannot dismiss a foreign finding", "[review]") {
  DaemonFixture d;
  Start(d);
  auto art = Script({"FAKE-REVIEW anthropic 0 json []",
                     "FAKE-REVIEW openai 1 json [" + F("X9", "HIGH", "new", "src/z.cpp", 7) + "]",
                     "FAKE-REVIEW anthropic 2 json [" +
                         F("r1.openai.X9", "HIGH", "withdraw", "src/z.cpp", 7) + "]"});
  auto r = Wait(d, StartReview(d, art, {"--mode", "debate", "--primary", "prim", "--challenger",
                                        "chal", "--cap", "1"}));
  CHECK(r["verdict"] == "BLOCKED");
  bool open = false;
  for (const auto& f : r["findings"]) open |= f["id"] == "r1.openai.X9" && f["open"] == true;
  CHECK(open);
  CHECK(d.Cli({"review", "gate", r["id"].get<std::string>()}).exit_code == 5);
}

TEST_CASE("a challenger that times out leaves the gate absent, never approved", "[review]") {
  DaemonFixture d;
  Start(d);
  auto art = Script({"FAKE-REVIEW anthropic * json []", "FAKE-REVIEW openai * hang"});
  auto r = Wait(d, StartReview(d, art, {"--mode", "debate", "--primary", "prim", "--challenger",
                                        "chal", "--cap", "2"}));
  CHECK(r["verdict"] == "gate-absent");
  CHECK(r["reason"].get<std::string>().find("timeout") != std::string::npos);
  RunResult gate = d.Cli({"review", "gate", r["id"].get<std::string>()});
  CHECK(gate.exit_code == 5);
  CHECK(gate.err.find("gate-absent") != std::string::npos);
}

TEST_CASE("a crashed reviewer is gate-absent too — malformed output is retried once",
          "[review]") {
  DaemonFixture d;
  Start(d);
  auto crash = Wait(d, StartReview(d, Script({"FAKE-REVIEW openai * exit 2"}),
                                   {"--mode", "simple", "--primary", "chal"}));
  CHECK(crash["verdict"] == "gate-absent");
  std::string once = d.dir() + "/once";
  auto retried = Wait(d, StartReview(d, Script({"FAKE-REVIEW openai * garbage-once " + once}),
                                     {"--mode", "simple", "--primary", "chal"}));
  CHECK(retried["verdict"] == "APPROVED");
  CHECK(retried["rounds"][0]["malformed"] == true);
  auto twice = Wait(d, StartReview(d, Script({"FAKE-REVIEW openai * garbage"}),
                                   {"--mode", "simple", "--primary", "chal"}));
  CHECK(twice["verdict"] == "gate-absent");
  auto report = d.CliJson({"report"});
  bool counted = false;
  for (const auto& p : report["profiles"]) {
    if (p["profile"] == "chal") counted = p["malformed"].get<int>() >= 3;
  }
  CHECK(counted);
}

TEST_CASE("cross-family rules: same-family reviewers are refused with the families named",
          "[review]") {
  DaemonFixture d;
  Start(d);
  RunResult simple = d.Cli({"review", "start", "--artifact", "-", "--writer-family", "anthropic",
                            "--mode", "simple", "--primary", "prim"}, "x");
  CHECK(simple.exit_code == 1);
  CHECK(simple.err.find("failed precondition") != std::string::npos);
  CHECK(simple.err.find("anthropic") != std::string::npos);
  RunResult debate = d.Cli({"review", "start", "--artifact", "-", "--writer-family", "openai",
                            "--mode", "debate", "--primary", "prim", "--challenger", "chal"}, "x");
  CHECK(debate.exit_code == 1);
  CHECK(debate.err.find("openai") != std::string::npos);
  // Ordinary swaps a colliding default to another family instead.
  auto ord = Wait(d, StartReview(d, Script({}), {"--mode", "ordinary"}));
  REQUIRE(ord["rounds"].size() == 1);
  CHECK(ord["rounds"][0]["family"] != "anthropic");
}

TEST_CASE("strong mode: two complementary reviewers, at most one Strong per session",
          "[review]") {
  DaemonFixture d;
  Start(d);
  auto first = Wait(d, StartReview(d, Script({}), {"--mode", "strong", "--session", "s1"}));
  REQUIRE(first["rounds"].size() == 2);
  CHECK(first["rounds"][0]["family"] != first["rounds"][1]["family"]);
  for (const auto& r : first["rounds"]) CHECK(r["family"] != "anthropic");
  CHECK(first["verdict"] == "APPROVED");
  auto second = StartReview(d, Script({}), {"--mode", "strong", "--session", "s1"});
  CHECK(second["verdict"] == "BLOCKED");
  CHECK(second["blocked_by"] == "strong_session_used");
  CHECK(second["rounds"].empty());
  auto other = StartReview(d, Script({}), {"--mode", "strong", "--session", "s2"});
  CHECK(other["blocked_by"] == "");
  auto mech = StartReview(d, Script({}), {"--mode", "mechanical"});
  CHECK(mech["verdict"] == "APPROVED");
  CHECK(mech["reason"].get<std::string>().find("mechanical") != std::string::npos);
}

TEST_CASE("parallel lines take the stricter severity — report shows Phase 0 figures", "[review]") {
  DaemonFixture d;
  Start(d);
  auto art = Script({"FAKE-REVIEW openai * json [" + F("A", "LOW", "new", "src/a.cpp", 10) + "]",
                     "FAKE-REVIEW deepseek * json [" + F("B", "HIGH", "new", "src/a.cpp", 11) + "," +
                         F("C", "MEDIUM", "new", "docs/x.md", 1, "docs") + "]"});
  auto r = Wait(d, StartReview(d, art, {"--mode", "strong", "--session", "p1"}));
  CHECK(r["verdict"] == "BLOCKED");  // the overlapping pair is HIGH, raised by a foreign family
  CHECK(r["termination"] == "parallel");
  auto report = d.CliJson({"report"});
  CHECK(report["reviews"] == 1);
  CHECK(report["reviews_counted"] == 1);
  // C (docs) is deepseek's alone; A and B overlap (adopted_both), so neither is unique.
  CHECK(report["unique_findings"]["by_family"]["deepseek"]["MEDIUM"] == 1);
  CHECK(report["unique_findings_per_family"]["deepseek"] == 1);
  CHECK(report["converged"] == 0);  // parallel lines are not a debate
  CHECK(report["debates"]["count"] == 0);
}

TEST_CASE("a pending review wait does not hold up daemon shutdown", "[review]") {
  DaemonFixture d;
  Start(d, {{"review", {{"default_cap", 2}, {"round_timeout_s", 60}}}});
  auto r = StartReview(d, Script({"FAKE-REVIEW openai * hang"}), {"--mode", "simple", "--primary", "chal"});
  auto waiting = std::async(std::launch::async, [&] {
    return d.Cli({"review", "wait", r["id"].get<std::string>(), "--timeout-ms", "600000"});
  });
  // The wait is parked in the daemon (its own count says so) before shutdown begins.
  REQUIRE(conclave::testing::WaitFor(
      [&] {
        auto s = d.CliJson({"status"});
        return s["counts"].value("review_waiters", std::string("0")) == "1";
      },
      std::chrono::seconds(10)));
  auto start = std::chrono::steady_clock::now();
  CHECK(d.Stop() == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  CHECK(waiting.get().exit_code != 0);
}

TEST_CASE("no foreign reviewer, no pass: a same-family debate with cap 0 is gate-absent",
          "[review]") {
  DaemonFixture d;
  Start(d);
  auto r = Wait(d, StartReview(d, Script({}), {"--mode", "debate", "--primary", "prim", "--cap", "0"}));
  CHECK(r["verdict"] == "gate-absent");
  CHECK(r["termination"] == "no_foreign_reviewer");
  CHECK(d.Cli({"review", "gate", r["id"].get<std::string>()}).exit_code == 5);
  // With a foreign primary, cap 0 is a valid one-reviewer review.
  auto ok = Wait(d, StartReview(d, Script({}), {"--mode", "debate", "--primary", "chal", "--cap", "0"}));
  CHECK(ok["verdict"] == "APPROVED");
}

TEST_CASE("simple mode takes the configured default reviewer when it is cross-family",
          "[review]") {
  DaemonFixture d;
  Start(d, {{"review", {{"default_cap", 2}, {"round_timeout_s", 20}, {"default_profile", "third"}}}});
  auto r = Wait(d, StartReview(d, Script({}), {"--mode", "simple"}));
  REQUIRE(r["rounds"].size() == 1);
  CHECK(r["rounds"][0]["profile"] == "third");
}

TEST_CASE("a challenger gets the floor after the primary concedes, until a foreign round is quiet",
          "[review]") {
  DaemonFixture d;
  Start(d);
  auto art = Script({"FAKE-REVIEW anthropic 0 json []",
                     "FAKE-REVIEW openai 1 json [" + F("C1", "BLOCKER", "new") + "]",
                     "FAKE-REVIEW anthropic 2 json [" + F("r1.openai.C1", "BLOCKER", "agree") + "]",
                     "FAKE-REVIEW openai 3 json []"});
  auto r = Wait(d, StartReview(d, art, {"--mode", "debate", "--primary", "prim", "--challenger",
                                        "chal", "--cap", "3"}));
  CHECK(r["rounds"].size() == 4);
  CHECK(r["termination"] == "converged");
  CHECK(r["verdict"] == "BLOCKED");
}
