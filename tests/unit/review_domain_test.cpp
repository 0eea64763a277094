// Unit tests for the review domain: worker contract, findings, mode selection, debate
// termination, reconciliation and the fail-closed gate.
#include <catch2/catch.hpp>

#include "domain/debate.h"
#include "domain/findings.h"
#include "domain/reconcile.h"
#include "domain/review_policy.h"
#include "domain/worker_contract.h"

namespace conclave::domain {
namespace {

Finding F(std::string id, Severity severity = Severity::kMedium, Stance stance = Stance::kNew,
          std::string path = "src/a.cpp", int line = 10, std::string category = "correctness") {
  Finding f;
  f.id = std::move(id);
  f.severity = severity;
  f.category = std::move(category);
  f.path = std::move(path);
  f.line = line;
  f.title = "t";
  f.stance = stance;
  return f;
}

// Writer and primary are anthropic (same-source primary); challengers are deepseek.
RoundRecord R(int round, std::vector<Finding> findings, std::string family = "") {
  if (family.empty()) family = round % 2 == 1 ? "deepseek" : "anthropic";
  return RoundRecord{round, round % 2 == 1, std::move(findings), std::move(family)};
}

const std::vector<ReviewerCandidate> kAvailable = {{"qwen-max", "alibaba"},
                                                   {"deepseek-flash", "deepseek"},
                                                   {"glm", "zhipu"},
                                                   {"luna", "openai"},
                                                   {"claude", "anthropic"}};

ReviewPlanRequest Request(ReviewMode mode, std::string writer) {
  ReviewPlanRequest r;
  r.mode = mode;
  r.writer_family = std::move(writer);
  r.available = kAvailable;
  r.default_profile = "qwen-max";
  r.cap = 2;
  return r;
}

}  // namespace

TEST_CASE("debate: cap 0 stops after the primary, converged", "[review]") {
  std::vector<RoundRecord> rounds = {R(0, {F("A1")})};
  CHECK(EvaluateDebate(rounds, 0) == Termination::kConverged);
  CHECK(EvaluateDebate(rounds, 2) == Termination::kContinue);
  CHECK(EvaluateDebate({}, 2) == Termination::kContinue);
  CHECK(NextRoundNumber({}) == 0);
  CHECK_FALSE(NextIsForeign({}));
  CHECK(NextRoundNumber(rounds) == 1);
  CHECK(NextIsForeign(rounds));
}

TEST_CASE("debate: a challenger that adds nothing and agrees converges at once", "[review]") {
  std::vector<RoundRecord> rounds = {R(0, {F("A1")}),
                                     R(1, {F("A1", Severity::kMedium, Stance::kAgree)})};
  CHECK(EvaluateDebate(rounds, 2) == Termination::kConverged);
  CHECK(DisagreementFingerprint(rounds).empty());
}

TEST_CASE("debate: converges in round 3", "[review]") {
  std::vector<RoundRecord> rounds = {R(0, {F("A1")})};
  rounds.push_back(R(1, {F("A1", Severity::kMedium, Stance::kRebut), F("B1")}));
  CHECK(EvaluateDebate(rounds, 2) == Termination::kContinue);
  CHECK(OpenDisputes(rounds) == std::vector<std::string>{"A1"});
  rounds.push_back(R(2, {F("A1", Severity::kMedium, Stance::kWithdraw),
                         F("B1", Severity::kMedium, Stance::kRebut)}));
  CHECK(OpenDisputes(rounds) == std::vector<std::string>{"B1"});
  CHECK(EvaluateDebate(rounds, 2) == Termination::kContinue);
  CHECK(NextIsForeign(rounds));
  rounds.push_back(R(3, {F("B1", Severity::kMedium, Stance::kWithdraw)}));
  CHECK(EvaluateDebate(rounds, 2) == Termination::kConverged);
  CHECK(CheckRoundSequence(rounds).empty());
}

TEST_CASE("debate: the same disagreement over two round pairs stops early", "[review]") {
  std::vector<RoundRecord> rounds = {R(0, {F("A1"), F("A2")})};
  rounds.push_back(R(1, {F("A1", Severity::kMedium, Stance::kRebut)}));
  rounds.push_back(R(2, {F("A1", Severity::kMedium, Stance::kRebut)}));
  const std::string first = DisagreementFingerprint(rounds);
  CHECK(first.rfind("dfp:", 0) == 0);
  CHECK(EvaluateDebate(rounds, 5) == Termination::kContinue);
  rounds.push_back(R(3, {F("A1", Severity::kMedium, Stance::kRebut)}));
  CHECK(EvaluateDebate(rounds, 5) == Termination::kContinue);
  rounds.push_back(R(4, {}));  // silence does not concede
  CHECK(DisagreementFingerprint(rounds) == first);
  CHECK(EvaluateDebate(rounds, 5) == Termination::kNoMovement);
}

TEST_CASE("debate: cap reached with disagreement open", "[review]") {
  std::vector<RoundRecord> rounds = {R(0, {F("A1"), F("A2")}),
                                     R(1, {F("A1", Severity::kMedium, Stance::kRebut)}),
                                     R(2, {F("A1", Severity::kMedium, Stance::kRebut)})};
  CHECK(EvaluateDebate(rounds, 1) == Termination::kCapReached);
  // Movement (a different dispute) but the cap is spent.
  rounds.push_back(R(
      3, {F("A1", Severity::kMedium, Stance::kAgree), F("A2", Severity::kMedium, Stance::kRebut)}));
  CHECK(EvaluateDebate(rounds, 2) == Termination::kContinue);            // the primary answers last
  rounds.push_back(R(4, {F("A2", Severity::kMedium, Stance::kAgree)}));  // owner agree ≠ concede
  CHECK(OpenDisputes(rounds) == std::vector<std::string>{"A2"});
  CHECK(EvaluateDebate(rounds, 2) == Termination::kCapReached);
}

TEST_CASE("debate: new primary findings get a challenge unless the cap is spent", "[review]") {
  std::vector<RoundRecord> rounds = {R(0, {F("A1")}), R(1, {F("B1")}),
                                     R(2, {F("B1", Severity::kMedium, Stance::kAgree), F("A3")})};
  CHECK(EvaluateDebate(rounds, 2) == Termination::kContinue);
  CHECK(EvaluateDebate(rounds, 1) == Termination::kConverged);
}

TEST_CASE("debate: rebut through refs, fingerprint order independence", "[review]") {
  Finding rebut = F("B9", Severity::kLow, Stance::kRebut);
  rebut.refs = {"A1"};
  std::vector<RoundRecord> rounds = {R(0, {F("A1"), F("A2")}), R(1, {rebut})};
  CHECK(OpenDisputes(rounds) == std::vector<std::string>{"A1"});
  std::vector<RoundRecord> ab = {
      R(0, {F("A1"), F("A2")}),
      R(1, {F("A1", Severity::kLow, Stance::kRebut), F("A2", Severity::kLow, Stance::kRebut)})};
  std::vector<RoundRecord> ba = {
      R(0, {F("A2"), F("A1")}),
      R(1, {F("A2", Severity::kLow, Stance::kRebut), F("A1", Severity::kLow, Stance::kRebut)})};
  CHECK(DisagreementFingerprint(ab) == DisagreementFingerprint(ba));
  CHECK(DisagreementFingerprint(ab) != DisagreementFingerprint(rounds));
  CHECK_FALSE(CheckRoundSequence({R(0, {}), R(2, {})}).empty());
  CHECK(ParseTermination("no_movement") == Termination::kNoMovement);
  CHECK(TerminationName(Termination::kCapReached) == "cap_reached");
}

TEST_CASE("materially different rubric", "[review]") {
  const Finding a = F("A", Severity::kHigh, Stance::kNew, "src/a.cpp", 10);
  CHECK(Overlaps(a, F("B", Severity::kLow, Stance::kNew, "src/a.cpp", 13)));
  CHECK_FALSE(Overlaps(a, F("B", Severity::kLow, Stance::kNew, "src/a.cpp", 14)));
  CHECK(Overlaps(a, F("B", Severity::kLow, Stance::kNew, "src/a.cpp", 0)));
  CHECK_FALSE(Overlaps(a, F("B", Severity::kLow, Stance::kNew, "src/b.cpp", 10)));
  CHECK_FALSE(Overlaps(a, F("B", Severity::kLow, Stance::kNew, "src/a.cpp", 10, "security")));
  CHECK(IsMateriallyDifferent(a, {F("B", Severity::kLow, Stance::kNew, "src/a.cpp", 20)}));
  CHECK_FALSE(IsMateriallyDifferent(a, {F("B", Severity::kLow, Stance::kNew, "src/a.cpp", 8)}));
}

TEST_CASE("reconcile: dispositions and provenance", "[review]") {
  std::vector<RoundRecord> rounds = {
      R(0, {F("A1", Severity::kMedium), F("A2", Severity::kLow, Stance::kNew, "src/b.cpp", 5),
            F("A3", Severity::kLow, Stance::kNew, "docs/x.md", 1, "docs")}),
      R(1, {F("A1", Severity::kHigh, Stance::kAgree),
            F("B1", Severity::kMajor, Stance::kNew, "src/b.cpp", 7),
            F("B2", Severity::kHigh, Stance::kNew, "src/c.cpp", 1, "security")})};
  const std::vector<ReconciledFinding> out = Reconcile(rounds, "anthropic");
  REQUIRE(out.size() == 5);
  CHECK(out[0].finding.id == "A1");
  CHECK(out[0].disposition == kAdoptedBoth);
  CHECK(out[0].finding.severity == Severity::kHigh);  // stricter of the holding versions
  CHECK(out[0].from_foreign);
  CHECK(out[1].disposition == kAdoptedBoth);  // A2 ~ B1 by overlap
  CHECK(out[1].overlaps == std::vector<std::string>{"B1"});
  CHECK(out[2].disposition == kAdoptedPrimary);
  CHECK_FALSE(out[2].from_foreign);
  CHECK(out[3].disposition == kAdoptedBoth);
  CHECK(out[4].disposition == kEscalatedForeign);
  CHECK(out[4].family == "deepseek");
  CHECK(out[4].round == 1);
  CHECK(out[4].open);
  const auto unique = UniqueFindingsPerFamily(out);
  CHECK(unique.at("anthropic") == 1);  // A3
  CHECK(unique.at("deepseek") == 1);   // B2
}

TEST_CASE("reconcile: the primary cannot dismiss a foreign finding", "[review]") {
  std::vector<RoundRecord> rounds = {
      R(0, {}), R(1, {F("B1", Severity::kHigh)}),
      R(2, {F("B1", Severity::kLow, Stance::kRebut), F("B1", Severity::kLow, Stance::kWithdraw)})};
  std::vector<ReconciledFinding> out = Reconcile(rounds, "anthropic");
  REQUIRE(out.size() == 1);
  CHECK(out[0].open);
  CHECK(out[0].finding.severity == Severity::kHigh);
  CHECK(EvaluateDebate(rounds, 2) == Termination::kContinue);  // a challenger has the floor
  GateInput gate{false, EvaluateDebate(rounds, 1), out, false};
  CHECK(ComputeVerdict(gate) == Verdict::kBlocked);
  // Another challenger family cannot withdraw it either.
  rounds.push_back(R(3, {F("B1", Severity::kHigh, Stance::kWithdraw)}, "zhipu"));
  CHECK(Reconcile(rounds, "anthropic")[0].open);
  // The foreign reviewer withdrawing it on re-review closes it.
  rounds.back().family = "deepseek";
  out = Reconcile(rounds, "anthropic");
  CHECK_FALSE(out[0].open);
  gate = GateInput{false, EvaluateDebate(rounds, 2), out, false};
  CHECK(gate.termination == Termination::kConverged);
  CHECK(ComputeVerdict(gate) == Verdict::kApproved);
}

TEST_CASE("parallel synthesis: stricter severity wins on overlap", "[review]") {
  const std::vector<LineFindings> lines = {
      {"luna",
       "openai",
       {F("L1", Severity::kMedium), F("L2", Severity::kInfo, Stance::kNew, "src/z.cpp", 1)}},
      {"qwen-max", "alibaba", {F("Q1", Severity::kHigh, Stance::kNew, "src/a.cpp", 12)}}};
  const std::vector<ReconciledFinding> out = SynthesizeParallel(lines, "deepseek");
  REQUIRE(out.size() == 3);
  CHECK(out[0].finding.severity == Severity::kHigh);
  CHECK(out[0].disposition == kAdoptedBoth);
  CHECK(out[1].disposition == kAdoptedSingle);
  CHECK(out[2].finding.severity == Severity::kHigh);
  CHECK(out[2].from_foreign);
  CHECK(ComputeVerdict({false, Termination::kConverged, out, false}) == Verdict::kBlocked);
}

TEST_CASE("gate: fail-closed verdicts", "[review]") {
  ReconciledFinding primary_high{F("A1", Severity::kHigh),     "anthropic", 0, false,
                                 std::string(kAdoptedPrimary), true,        {}};
  ReconciledFinding low = primary_high;
  low.finding.severity = Severity::kLow;
  ReconciledFinding info = primary_high;
  info.finding.severity = Severity::kInfo;
  CHECK(ComputeVerdict({true, Termination::kConverged, {}, false}) == Verdict::kGateAbsent);
  CHECK(ComputeVerdict({false, Termination::kContinue, {}, false}) == Verdict::kGateAbsent);
  CHECK(ComputeVerdict({false, Termination::kCapReached, {}, false}) == Verdict::kStalemate);
  CHECK(DecideGate({false, Termination::kCapReached, {}, false}).escalate);
  CHECK(ComputeVerdict({false, Termination::kConverged, {primary_high}, false}) ==
        Verdict::kNeedsChanges);
  ReconciledFinding primary_blocker = primary_high;
  primary_blocker.finding.severity = Severity::kBlocker;
  CHECK(ComputeVerdict({false, Termination::kNoMovement, {primary_blocker}, false}) ==
        Verdict::kBlocked);
  CHECK(ComputeVerdict({false, Termination::kConverged, {low}, false}) == Verdict::kNeedsChanges);
  CHECK(ComputeVerdict({false, Termination::kConverged, {low}, false, false}) ==
        Verdict::kApproved);
  CHECK(ComputeVerdict({false, Termination::kConverged, {info}, false}) == Verdict::kApproved);
  primary_high.open = false;
  CHECK(ComputeVerdict({false, Termination::kConverged, {primary_high}, false}) ==
        Verdict::kApproved);
  const GateDecision skip = DecideGate({false, Termination::kConverged, {}, true});
  CHECK(skip.verdict == Verdict::kApproved);
  CHECK_THAT(skip.reason, Catch::Contains("mechanical"));
  CHECK(VerdictName(Verdict::kStalemate) == "adversarial-stalemate");
  CHECK(ParseVerdict("gate-absent") == Verdict::kGateAbsent);
}

TEST_CASE("mode selection: parallel modes and family collisions", "[review]") {
  ReviewPlan plan = PlanReview(Request(ReviewMode::kMechanical, "deepseek"));
  CHECK(plan.ok);
  CHECK(plan.lines.empty());
  CHECK_FALSE(plan.skip_reason.empty());

  plan = PlanReview(Request(ReviewMode::kSimple, "alibaba"));
  REQUIRE(plan.ok);
  REQUIRE(plan.lines.size() == 1);
  CHECK(plan.lines[0].profile == "deepseek-flash");
  ReviewPlanRequest request = Request(ReviewMode::kSimple, "deepseek");
  request.primary = ReviewerCandidate{"deepseek-flash", "deepseek"};
  plan = PlanReview(request);
  CHECK_FALSE(plan.ok);
  CHECK(plan.error ==
        "reviewer deepseek-flash (family deepseek) shares the writer's family deepseek");

  plan = PlanReview(Request(ReviewMode::kOrdinary, "deepseek"));
  REQUIRE(plan.ok);
  CHECK(plan.lines.at(0).profile == "qwen-max");
  plan = PlanReview(Request(ReviewMode::kOrdinary, "Alibaba"));  // collides: swapped
  REQUIRE(plan.ok);
  CHECK(plan.lines.at(0).profile == "deepseek-flash");

  plan = PlanReview(Request(ReviewMode::kStrong, "alibaba"));
  REQUIRE(plan.ok);
  REQUIRE(plan.lines.size() == 2);
  CHECK(plan.lines[0].family == "deepseek");
  CHECK(plan.lines[1].family == "zhipu");
  request = Request(ReviewMode::kStrong, "anthropic");
  request.primary = ReviewerCandidate{"luna", "openai"};
  plan = PlanReview(request);
  REQUIRE(plan.ok);
  CHECK(plan.lines[0].profile == "luna");
  CHECK(plan.lines[1].profile == "qwen-max");  // the default profile fills first
  request.challengers = {{"luna-2", "openai"}};
  plan = PlanReview(request);
  CHECK_FALSE(plan.ok);
  CHECK_THAT(plan.error, Catch::Contains("share the family openai"));
  request = Request(ReviewMode::kStrong, "openai");
  request.available = {{"luna", "openai"}, {"qwen-max", "alibaba"}};
  CHECK_FALSE(PlanReview(request).ok);

  request = Request(ReviewMode::kSimple, "deepseek");
  request.cap = -1;
  plan = PlanReview(request);
  CHECK_FALSE(plan.ok);
  CHECK_THAT(plan.error, Catch::Contains("cap"));
  CHECK(ParseReviewMode("Strong") == ReviewMode::kStrong);
  CHECK_FALSE(ParseReviewMode("bogus").has_value());
  CHECK(ReviewModeName(ReviewMode::kDebate) == "debate");
}

TEST_CASE("mode selection: debate primary and challengers", "[review]") {
  ReviewPlanRequest request = Request(ReviewMode::kDebate, "deepseek");
  request.challengers = {{"deepseek-flash", "deepseek"}};
  ReviewPlan plan = PlanReview(request);
  CHECK_FALSE(plan.ok);
  CHECK(plan.error ==
        "challenger deepseek-flash (family deepseek) shares the writer's family deepseek");
  request.challengers = {{"qwen-plus", "alibaba"}};
  plan = PlanReview(request);
  CHECK_FALSE(plan.ok);
  CHECK(plan.error == "challenger qwen-plus (family alibaba) shares the primary's family alibaba");

  request = Request(ReviewMode::kDebate, "anthropic");
  request.primary = ReviewerCandidate{"claude", "anthropic"};  // same-source primary allowed
  plan = PlanReview(request);
  REQUIRE(plan.ok);
  CHECK(plan.primary->profile == "claude");
  REQUIRE(plan.challengers.size() == 1);
  CHECK(plan.challengers[0].profile == "qwen-max");
  CHECK(plan.cap == 2);
  request.cap = 0;
  plan = PlanReview(request);
  REQUIRE(plan.ok);
  CHECK(plan.challengers.empty());
  request.cap = 1;
  request.available = {{"claude", "anthropic"}, {"claude-2", "anthropic"}};
  plan = PlanReview(request);
  CHECK_FALSE(plan.ok);
  CHECK_THAT(plan.error, Catch::Contains("anthropic"));
  CHECK(ChallengerIndexForRound(1, 2) == 0);
  CHECK(ChallengerIndexForRound(3, 2) == 1);
  CHECK(ChallengerIndexForRound(5, 2) == 0);
}

TEST_CASE("findings: fenced block, whole-text JSON, empty list", "[review]") {
  const std::string text =
      "Review done.\n```json\n{\"findings\": [{\"id\": \"X\", \"severity\": \"LOW\", "
      "\"category\": \"docs\", \"title\": \"old\"}]}\n```\nthen\n```json\n"
      "{\"findings\": [{\"id\": \"F1\", \"severity\": \"high\", \"category\": \"Security\",\n"
      "\"location\": {\"path\": \"src/a.cpp\", \"line\": 42}, \"title\": \"overflow\",\n"
      "\"detail\": \"d\", \"stance\": \"rebut\", \"refs\": [\"A1\"]}]}\n```\n";
  FindingsParse parse = ExtractFindings(text);
  REQUIRE(parse.ok);
  REQUIRE(parse.findings.size() == 1);
  const Finding& f = parse.findings[0];
  CHECK(f.id == "F1");
  CHECK(f.severity == Severity::kHigh);
  CHECK(f.category == "security");
  CHECK(f.path == "src/a.cpp");
  CHECK(f.line == 42);
  CHECK(f.stance == Stance::kRebut);
  CHECK(f.refs == std::vector<std::string>{"A1"});
  FindingsParse round_trip =
      ParseFindingsJson(nlohmann::json{{"findings", nlohmann::json::array({FindingToJson(f)})}});
  REQUIRE(round_trip.ok);
  CHECK(round_trip.findings[0].refs == f.refs);

  parse = ExtractFindings("  {\"findings\": []}  ");
  CHECK(parse.ok);
  CHECK(parse.findings.empty());
  parse = ExtractFindings(
      "{\"findings\": [{\"id\": 7, \"severity\": \"INFO\", \"category\": "
      "\"docs\", \"title\": \"t\", \"location\": \"README.md:3\"}]}");
  REQUIRE(parse.ok);
  CHECK(parse.findings[0].id == "7");
  CHECK(parse.findings[0].line == 3);
  CHECK(nlohmann::json::parse(kFindingsJsonSchema).at("required")[0] == "findings");
}

TEST_CASE("findings: malformed answers name the problem", "[review]") {
  const auto error = [](const std::string& text) { return ExtractFindings(text).error; };
  CHECK_THAT(error("all good, no issues"), Catch::Contains("no ```json block"));
  CHECK_THAT(error("```json\n{\"findings\": [ \n```"), Catch::Contains("not valid JSON"));
  CHECK_THAT(error("{\"findings\": {}}"), Catch::Contains("findings: expected an array"));
  CHECK_THAT(error("{\"other\": 1}"), Catch::Contains("findings: missing"));
  const std::string two = R"({"findings": [
      {"id": "A", "severity": "LOW", "category": "docs", "title": "t"},
      {"id": "B", "severity": "CRITICAL", "category": "docs", "title": "t"}]})";
  CHECK_THAT(error(two), Catch::Contains("findings[1].severity") && Catch::Contains("CRITICAL"));
  CHECK_THAT(error(R"({"findings": [{"id": "A", "severity": "LOW", "category": "style",
      "title": "t"}]})"),
             Catch::Contains("findings[0].category"));
  CHECK_THAT(error(R"({"findings": [{"id": "A", "severity": "LOW", "category": "docs"}]})"),
             Catch::Contains("findings[0].title: missing"));
  CHECK_THAT(error(R"({"findings": [{"id": "A", "severity": "LOW", "category": "docs",
      "title": "t"}, {"id": "A", "severity": "LOW", "category": "docs", "title": "u"}]})"),
             Catch::Contains("findings[1].id: duplicate"));
  CHECK_THAT(error(R"({"findings": [{"id": "A", "severity": "LOW", "category": "docs",
      "title": "t", "location": {"path": "a", "line": -2}}]})"),
             Catch::Contains("findings[0].location.line"));
  CHECK_FALSE(ExtractFindings(two).ok);
}

TEST_CASE("worker contract: heading styles, status and changed files", "[review]") {
  const std::string text =
      "Some preamble.\n"
      "SUMMARY: FAIL — two tests still red\n"
      "## Evidence\n"
      "ran ctest: 2 failures\n"
      "```\nRISKS: inside a fence is not a heading\n```\n"
      "**CHANGES**\n"
      "- src/a.cpp: did x\n"
      "* `src/b.h`\n"
      "M src/c.cpp\n"
      "R old/name.cpp -> new/name.cpp\n"
      "1. docs/guide.md (new)\n"
      "- Added tests for the parser.\n"
      "- /etc/passwd: absolute\n"
      "- ../outside.cpp\n"
      "- Updated `include/x.h` and `src/a.cpp:12`\n"
      "Risks\n"
      "none known\n"
      "**Blockers:** none\n";
  const WorkerContract c = ParseWorkerContract(text);
  CHECK(c.ok());
  CHECK(c.status == "FAIL");
  CHECK(c.sections.at("SUMMARY") == "FAIL — two tests still red");
  CHECK_THAT(c.sections.at("EVIDENCE"), Catch::Contains("inside a fence"));
  CHECK(c.sections.at("RISKS") == "none known");
  CHECK(c.sections.at("BLOCKERS") == "none");
  CHECK(c.changed_files == std::vector<std::string>{"src/a.cpp", "src/b.h", "src/c.cpp",
                                                    "new/name.cpp", "docs/guide.md",
                                                    "include/x.h"});
  const nlohmann::json j = ContractToJson(c);
  CHECK(j.at("ok") == true);
  CHECK(j.at("changed_files").size() == 6);
}

TEST_CASE("worker contract: missing sections, none, STATUS line", "[review]") {
  WorkerContract c = ParseWorkerContract(
      "**Summary:** BLOCKED waiting for credentials\nCHANGES:\nnone\nSTATUS: passed\n");
  CHECK_FALSE(c.ok());
  CHECK(c.missing == std::vector<std::string>{"EVIDENCE", "RISKS", "BLOCKERS"});
  CHECK(c.changed_files.empty());
  CHECK(c.status == "PASS");  // an explicit STATUS line wins over the summary
  c = ParseWorkerContract("SUMMARY\nBLOCKED on review\nEVIDENCE:\nCHANGES: -\nRISKS:\nBLOCKER:\n");
  CHECK(c.ok());
  CHECK(c.status == "BLOCKED");
  CHECK(c.changed_files.empty());
  c = ParseWorkerContract("SUMMARY: Failing tests fixed\n## STATUS\nFAIL\n");
  CHECK(c.status == "FAIL");
  CHECK(ParseWorkerContract("SUMMARY: Fixed it\n").status.empty());
  CHECK(ParseWorkerContract("").missing.size() == 5);
}

}  // namespace conclave::domain
