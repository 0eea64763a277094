// Integration: whole flows through the daemon in a real git repository — a scripted fake
// writer (FAKE: lines in the brief; "if-fix"/"if-first" tell the rounds apart), the shell
// profile running the verify commands, a scripted fake reviewer of another family reading
// "+FAKE-REVIEW" lines from the reviewed diff.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "daemon_fixture.h"

using conclave::testing::DaemonFixture;
using conclave::testing::RunProgram;
using conclave::testing::RunResult;
using conclave::testing::WaitFor;
using json = nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

RunResult Git(const std::string& repo, std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/git", "-C", repo};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv);
}

// writer and writer2 (anthropic), rev (openai reviewer), shell (the verify commands); a repo on main.
std::string Setup(DaemonFixture& d, int round_timeout_s = 60, int max_writers = 3,
                  const json& extra_config = json::object(), int writer_timeout_s = 0) {
  auto writer = d.FakeProfile("writer", "anthropic", 1);
  if (writer_timeout_s > 0) writer["timeout_s"] = writer_timeout_s;
  d.WriteProfile("writer", writer);
  d.WriteProfile("writer2", d.FakeProfile("writer2", "anthropic", 1));
  auto rev = d.FakeProfile("rev", "openai", 4);
  rev["env"] = {{"FAKE_FAMILY", "openai"}};
  d.WriteProfile("rev", rev);
  d.WriteProfile("shell", {{"name", "shell"},       {"family", "local"},
                           {"type", "command"},     {"command", {"/bin/sh", "-s"}},
                           {"brief", "stdin"},      {"parser", "text"},
                           {"contract", false},     {"timeout_s", 60},
                           {"idle_timeout_s", 0},   {"max_concurrent", 4}});
  json cfg = {{"retry", {{"base_ms", 50}, {"max_ms", 200}, {"max_attempts", 1}}},
              {"review", {{"default_cap", 1}, {"round_timeout_s", round_timeout_s}}},
              {"flow", {{"worktree_root", d.dir() + "/worktrees"}, {"max_parallel_writers", max_writers}}},
              // A person hears of ready / needs_human outside the inbox: the events land here.
              {"notify_command", {"/bin/sh", "-c", "cat >> " + d.dir() + "/notified"}}};
  cfg.update(extra_config);
  d.Start({"--config", d.WriteFile("config.json", cfg.dump())});
  std::string repo = d.dir() + "/repo";
  fs::create_directories(repo);
  REQUIRE(Git(repo, {"init", "-q", "-b", "main"}).exit_code == 0);
  d.WriteFile("repo/README", "a repository\n");
  REQUIRE(Git(repo, {"add", "-A"}).exit_code == 0);
  REQUIRE(Git(repo, {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m",
                     "init"})
              .exit_code == 0);
  return repo;
}

json StartFlow(DaemonFixture& d, const std::string& repo, const std::string& brief,
               std::vector<std::string> extra) {
  std::vector<std::string> a = {"flow", "start", "--repo", repo, "--brief", "-", "--writer",
                                "writer", "--review", "simple", "--reviewer", "rev"};
  a.insert(a.end(), extra.begin(), extra.end());
  return d.CliJson(a, brief);
}

json WaitFlow(DaemonFixture& d, const json& f, int want_exit) {
  RunResult r = d.Cli({"--json", "flow", "wait", f["id"].get<std::string>(), "--timeout-ms", "120000"});
  INFO(r.out << r.err << d.daemon_log());
  REQUIRE(r.exit_code == want_exit);
  return r.Json();
}

// Whether some task's full brief holds both texts (task list shows briefs shortened).
bool SomeBriefHas(DaemonFixture& d, const std::string& a, const std::string& b) {
  const json list = d.CliJson({"task", "list"});  // kept alive for the loop
  for (const auto& t : list["tasks"]) {
    auto show = d.CliJson({"task", "show", t["id"].get<std::string>()});
    std::string brief = show["task"].value("brief", "");
    if (brief.find(a) != std::string::npos && brief.find(b) != std::string::npos) return true;
  }
  return false;
}

int Lines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  return n;
}

std::string Finding(const std::string& sev) {
  return json({{"id", "M1"}, {"severity", sev}, {"category", "correctness"},
               {"location", {{"path", "review.txt"}, {"line", 1}}}, {"title", "the greeting is wrong"},
               {"detail", "say hello properly"}, {"stance", "new"}, {"refs", json::array()}})
      .dump();
}

// The reviewer's answer on the fixed revision: a carried finding closes only when its own
// family says it is fixed (no re-rolls, issue 12).
std::string Fixed(const std::string& id) {
  return json({{"id", id}, {"severity", "MAJOR"}, {"category", "correctness"},
               {"location", {{"path", "review.txt"}, {"line", 1}}}, {"title", "the greeting is wrong"},
               {"detail", "fixed now"}, {"stance", "fixed"}, {"refs", json::array()}})
      .dump();
}

}  // namespace

TEST_CASE("a flow that passes first time reaches ready with one implement, verify and review",
          "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  std::string runs = d.dir() + "/writer-runs";
  auto f = StartFlow(d, repo,
                     "Add a greeting.\nFAKE: append " + runs + " run\nFAKE: append hello.txt hello\n",
                     {"--verify", "test -f hello.txt", "--title", "greeting"});
  CHECK(f["branch"] == "conclave/flow-" + f["id"].get<std::string>());
  auto done = WaitFlow(d, f, 0);
  CHECK(done["status"] == "ready");
  CHECK(done["implement_runs"] == 1);
  CHECK(done["verify_runs"] == 1);
  CHECK(done["review_verdict"] == "APPROVED");
  CHECK(done.value("fix_rounds", 0) == 0);
  CHECK(Lines(runs) == 1);
  // flow show names each step's dispatch.
  auto runs_json = json::parse(done["dispatches_json"].get<std::string>());
  REQUIRE(runs_json.size() == 2);
  CHECK(runs_json[0]["step"] == "implement");
  CHECK(runs_json[0]["state"] == "succeeded");
  CHECK(runs_json[1]["step"] == "verify0");
  CHECK(d.Cli({"flow", "show", f["id"].get<std::string>()}).out.find(
            "r1 implement: dispatch " + runs_json[0]["dispatch_id"].dump()) != std::string::npos);
  // The writer's leftovers are committed on the branch with the daemon's own identity, and the
  // ready message names the merge command.
  std::string branch = done["branch"];
  CHECK(Git(repo, {"log", "-1", "--format=%an", branch}).out == "Conclave\n");
  CHECK(Git(repo, {"show", branch + ":hello.txt"}).out == "hello\n");
  CHECK(done["note"].get<std::string>().find("merge --ff-only " + branch) != std::string::npos);
  auto msgs = d.CliJson({"inbox", "--types", "flow"})["messages"];
  CHECK(msgs.size() >= 5);  // started, implement, verify, review, ready
  // Nothing was merged without --ship merge.
  CHECK(Git(repo, {"rev-parse", "main"}).out != Git(repo, {"rev-parse", branch}).out);
  // notify_command heard of ready (once: the other steps are not worth a person's time).
  std::vector<json> events;
  REQUIRE(WaitFor([&] { return Lines(d.dir() + "/notified") >= 1; }, 20s));
  std::ifstream notified(d.dir() + "/notified");
  for (std::string l; std::getline(notified, l);) events.push_back(json::parse(l));
  REQUIRE(events.size() == 1);
  CHECK(events[0]["type"] == "flow");
  CHECK(events[0]["payload"]["step"] == "ready");
  CHECK(events[0]["payload"]["flow_id"] == std::stoll(f["id"].get<std::string>()));
  // The flow's idle writer terminal is the flow's alone: a review whose reviewer is the same
  // profile gets a terminal of its own instead of being refused.
  auto r = d.CliJson({"review", "start", "--artifact", "-", "--writer-family", "openai", "--mode",
                      "simple", "--primary", "writer"},
                     "diff\n");
  auto rv = d.CliJson({"review", "wait", r["id"].get<std::string>(), "--timeout-ms", "60000"});
  CHECK(rv["verdict"] != "gate-absent");
}

TEST_CASE("a failing verify gets a fix round with the failing output, then passes", "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  auto f = StartFlow(d, repo, "Two lines.\nFAKE: append notes.txt line\n",
                     {"--verify", "test $(wc -l < notes.txt) -ge 2 || { echo need-two-lines; exit 1; }"});
  auto done = WaitFlow(d, f, 0);
  CHECK(done["status"] == "ready");
  CHECK(done["fix_rounds"] == 1);
  CHECK(done["implement_runs"] == 2);
  CHECK(done["verify_runs"] == 2);
  // The fix round's brief carried the failing command's output.
  CHECK(SomeBriefHas(d, "FIX ROUND", "need-two-lines"));
  // `report` has the flow's figures: its first round's verify failed.
  auto report = json::parse(d.CliJson({"report"}).dump());
  const auto& flows = report["flows"];
  INFO(flows.dump());
  CHECK(flows["count"] == 1);
  CHECK(flows["by_status"]["ready"] == 1);
  CHECK(flows["first_pass_verify"]["numerator"] == 0);
  CHECK(flows["first_pass_verify"]["denominator"] == 1);
  CHECK(flows["fix_rounds"]["total"] == 1);
  CHECK(flows["per_flow"][0]["implement_runs"] == 2);
  CHECK(flows["step_ms_total"].contains("verify"));
  CHECK(d.Cli({"report"}).out.find("first-pass verify: 0/1") != std::string::npos);
}

TEST_CASE("a reviewer's MAJOR finding causes a fix round whose regate passes", "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  auto f = StartFlow(d, repo,
                     "Greet.\nFAKE: append code.txt x\n"
                     "FAKE: if-first append review.txt FAKE-REVIEW openai * json [" +
                         Finding("MAJOR") + "]\nFAKE: if-fix append review.txt FAKE-REVIEW openai * json [" +
                         Fixed("r0.openai.M1") + "]\n",
                     {});
  auto done = WaitFlow(d, f, 0);
  CHECK(done["status"] == "ready");
  CHECK(done["fix_rounds"] == 1);
  CHECK(done["implement_runs"] == 2);
  CHECK(done["review_verdict"] == "APPROVED");
  auto review = d.CliJson({"review", "show", done["review_id"].get<std::string>()});
  CHECK(review["revision"] == 2);
  // The writer's fix brief named the finding by id.
  CHECK(SomeBriefHas(d, "FIX ROUND", "M1 [MAJOR]"));
}

TEST_CASE("a third needed fix round ends the flow in needs_human", "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  auto f = StartFlow(d, repo, "Never good.\nFAKE: append notes.txt line\n",
                     {"--verify", "echo still-broken; exit 3"});
  auto done = WaitFlow(d, f, 5);
  CHECK(done["status"] == "needs_human");
  CHECK(done["fix_rounds"] == 2);
  CHECK(done["implement_runs"] == 3);
  CHECK(done["verify_runs"] == 3);
  CHECK(!d.CliJson({"inbox", "--types", "escalation"})["messages"].empty());
  CHECK(d.CliJson({"flow", "list", "--status", "needs_human"})["flows"].size() == 1);
  REQUIRE(WaitFor([&] { return Lines(d.dir() + "/notified") >= 1; }, 20s));
  std::ifstream notified(d.dir() + "/notified");
  std::string line;
  std::getline(notified, line);
  CHECK(json::parse(line)["payload"]["step"] == "needs_human");
  // A decision gate over the flow: a person asks for another round, with a hint.
  auto gate = [&] {
    const json open = d.CliJson({"gate", "list", "--open"});  // kept alive for the loop
    for (const auto& g : open["gates"]) {
      if (g.value("flow_id", std::string("0")) == f["id"]) return g;
    }
    return json();
  };
  json g = gate();
  REQUIRE(!g.is_null());
  CHECK(g["options"] == json::array({"another-round", "cancel"}));
  d.CliJson({"gate", "resolve", g["id"].get<std::string>(), "--decision", "another-round",
             "--reason", "try-the-other-file"});
  // It runs once more (still broken), stops again and asks again; cancel ends it.
  auto show = [&] { return d.CliJson({"flow", "show", f["id"].get<std::string>()}); };
  REQUIRE(WaitFor([&] {
    auto s = show();
    return s["status"] == "needs_human" && s["implement_runs"] == 4;
  }, 60s));
  CHECK(SomeBriefHas(d, "FIX ROUND", "try-the-other-file"));
  json g2 = gate();
  REQUIRE(!g2.is_null());
  CHECK(g2["id"] != g["id"]);
  d.CliJson({"gate", "resolve", g2["id"].get<std::string>(), "--decision", "cancel"});
  CHECK(WaitFor([&] {
    return d.CliJson({"flow", "show", f["id"].get<std::string>()})["status"] == "cancelled";
  }, 20s));
}

TEST_CASE("a hung reviewer makes the flow needs_human (gate-absent), never ready", "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d, 2);
  auto f = StartFlow(d, repo, "Hang the reviewer.\nFAKE: append review.txt FAKE-REVIEW openai * hang\n",
                     {"--ship", "merge"});
  auto done = WaitFlow(d, f, 5);
  CHECK(done["status"] == "needs_human");
  CHECK(done["review_verdict"] == "gate-absent");
  // Nothing was merged.
  CHECK(Git(repo, {"rev-parse", "main"}).out != Git(repo, {"rev-parse", done["branch"]}).out);
  // A script's accept-risk is recorded but is no person's: the flow stays stopped.
  auto review = d.CliJson({"review", "show", done["review_id"].get<std::string>()});
  std::string review_gate = review["gate_id"];
  d.CliJson({"gate", "resolve", review_gate, "--decision", "accept-risk"});
  CHECK(d.CliJson({"flow", "show", f["id"].get<std::string>()})["status"] == "needs_human");
}

TEST_CASE("a person's sign-off of a gate-absent review makes the flow ready, never merged",
          "[flow]") {
  REQUIRE(fs::exists("/usr/bin/script"));  // util-linux: a pseudo-terminal for the CLI
  DaemonFixture d;
  std::string repo = Setup(d, 2);
  auto f = StartFlow(d, repo, "Hang the reviewer.\nFAKE: append review.txt FAKE-REVIEW openai * hang\n",
                     {"--ship", "merge"});
  auto stopped = WaitFlow(d, f, 5);
  REQUIRE(stopped["review_verdict"] == "gate-absent");
  std::string review_gate =
      d.CliJson({"review", "show", stopped["review_id"].get<std::string>()})["gate_id"];
  RunResult human = RunProgram({"/usr/bin/script", "-qec",
                                std::string(CONCLAVE_BIN) + " --socket " + d.socket() +
                                    " gate resolve " + review_gate +
                                    " --decision accept-risk --reason read-it-myself",
                                "/dev/null"});
  REQUIRE(human.exit_code == 0);
  REQUIRE(WaitFor([&] {
    return d.CliJson({"flow", "show", f["id"].get<std::string>()})["status"] == "ready";
  }, 30s));
  auto done = WaitFlow(d, f, 0);
  CHECK(done["review_verdict"] == "APPROVED_BY_SIGNOFF");
  CHECK(done["note"].get<std::string>().find("signed off by a person") != std::string::npos);
  // --ship merge fast-forwards only an APPROVED review: a sign-off is not one.
  CHECK(Git(repo, {"rev-parse", "main"}).out != Git(repo, {"rev-parse", done["branch"]}).out);
}

TEST_CASE("ship merge fast-forwards base after APPROVED", "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  auto f = StartFlow(d, repo, "Ship it.\nFAKE: append shipped.txt yes\n", {"--ship", "merge"});
  auto done = WaitFlow(d, f, 0);
  CHECK(Git(repo, {"rev-parse", "main"}).out == Git(repo, {"rev-parse", done["branch"]}).out);
  CHECK(done["note"].get<std::string>().find("merged") != std::string::npos);
  // clean removes the worktree; the merged branch goes too.
  auto cleaned = d.CliJson({"flow", "clean", f["id"].get<std::string>()});
  REQUIRE(cleaned["flows"].size() == 1);
  CHECK(!fs::exists(done["worktree"].get<std::string>()));
}

TEST_CASE("kill -9 of the daemon during implement resumes the flow to ready without a second "
          "finished implement",
          "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  std::string starts = d.dir() + "/starts", ends = d.dir() + "/ends", go = d.dir() + "/go";
  auto f = StartFlow(d, repo,
                     "Slow work.\nFAKE: append " + starts + " s\nFAKE: wait-file " + go +
                         "\nFAKE: append " + ends + " e\nFAKE: append hello.txt hi\n",
                     {"--verify", "test -f hello.txt"});
  REQUIRE(WaitFor([&] { return Lines(starts) == 1; }, 30s));
  d.Kill();
  d.Start();
  // Recovery stopped the orphaned writer and ran the interrupted round once more.
  REQUIRE(WaitFor([&] { return Lines(starts) == 2; }, 30s));
  std::ofstream(go) << "go";
  auto done = WaitFlow(d, f, 0);
  CHECK(done["status"] == "ready");
  CHECK(Lines(ends) == 1);  // exactly one implement finished for the one round
  CHECK(done["implement_runs"] == 2);  // the interrupted dispatch and its one re-run
  CHECK(done["verify_runs"] == 1);
  CHECK(done["review_verdict"] == "APPROVED");
}

TEST_CASE("kill -9 of the daemon during verify resumes the flow: one implement, verify again",
          "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  std::string writes = d.dir() + "/writes", verifies = d.dir() + "/verifies", go = d.dir() + "/go";
  // A slow test suite: it counts its runs and blocks on a FIFO until the test writes to it.
  REQUIRE(mkfifo(go.c_str(), 0600) == 0);
  auto f = StartFlow(d, repo, "Work.\nFAKE: append " + writes + " w\nFAKE: append hello.txt hi\n",
                     {"--verify", "echo v >> " + verifies + "; read x < " + go + "; test -f hello.txt"});
  REQUIRE(WaitFor([&] { return Lines(verifies) == 1; }, 30s));
  d.Kill();
  d.Start({"--config", d.dir() + "/config.json"});
  // The interrupted verify runs again; the finished implement round does not.
  REQUIRE(WaitFor([&] { return Lines(verifies) == 2; }, 30s));
  std::ofstream(go) << "go\n";  // opens once the re-run verify reads: it goes on
  auto done = WaitFlow(d, f, 0);
  CHECK(done["status"] == "ready");
  CHECK(Lines(writes) == 1);
  CHECK(done["implement_runs"] == 1);
  CHECK(done["review_verdict"] == "APPROVED");
}

TEST_CASE("kill -9 of the daemon during review resumes the review: one implement, one verify",
          "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  std::string writes = d.dir() + "/writes", verifies = d.dir() + "/verifies";
  std::string reviews = d.dir() + "/reviews", go = d.dir() + "/go";
  auto f = StartFlow(d, repo,
                     "Work.\nFAKE: append " + writes + " w\nFAKE: append review.txt FAKE-REVIEW "
                     "openai * count-wait " + reviews + " " + go + "\n",
                     {"--verify", "echo v >> " + verifies});
  REQUIRE(WaitFor([&] { return Lines(reviews) == 1; }, 30s));
  d.Kill();
  d.Start({"--config", d.dir() + "/config.json"});
  // The reviewer's interrupted round runs again; nothing before the review does.
  REQUIRE(WaitFor([&] { return Lines(reviews) == 2; }, 30s));
  std::ofstream(go) << "go";
  auto done = WaitFlow(d, f, 0);
  CHECK(done["status"] == "ready");
  CHECK(done["review_verdict"] == "APPROVED");
  CHECK(Lines(writes) == 1);
  CHECK(Lines(verifies) == 1);  // the verify result survived the crash
  CHECK(done["implement_runs"] == 1);
  CHECK(done["verify_runs"] == 1);
}

TEST_CASE("flow start is idempotent by key, and cancel stops the writer but keeps the worktree",
          "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  std::string starts = d.dir() + "/starts";
  std::string brief = "Wait.\nFAKE: append " + starts + " s\nFAKE: wait-file " + d.dir() + "/never\n";
  auto f = StartFlow(d, repo, brief, {"--key", "k1"});
  auto again = StartFlow(d, repo, brief, {"--key", "k1"});
  CHECK(again["id"] == f["id"]);
  REQUIRE(WaitFor([&] { return Lines(starts) == 1; }, 30s));
  auto c = d.CliJson({"flow", "cancel", f["id"].get<std::string>()});
  CHECK(c["status"] == "cancelled");
  auto done = WaitFlow(d, f, 5);
  CHECK(done["status"] == "cancelled");
  CHECK(fs::exists(done["worktree"].get<std::string>()));
  // The writer's task was cancelled with it.
  auto tasks = d.CliJson({"task", "list", "--status", "cancelled"})["tasks"];
  CHECK(tasks.size() == 1);
  CHECK(d.CliJson({"flow", "list"})["flows"].size() == 1);
  // Work on the branch (a person's commit in the kept worktree): clean removes the worktree
  // but keeps the unmerged branch.
  REQUIRE(Git(done["worktree"].get<std::string>(), {"-c", "user.name=T", "-c",
                                                    "user.email=t@example.com", "commit", "-q",
                                                    "--allow-empty", "-m", "wip"})
              .exit_code == 0);
  d.CliJson({"flow", "clean"});
  CHECK(!fs::exists(done["worktree"].get<std::string>()));
  CHECK(Git(repo, {"rev-parse", "--verify", "-q", done["branch"].get<std::string>()}).exit_code == 0);
}

TEST_CASE("flow clean without an id cleans every ended flow newest first and closes its terminals",
          "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  // One after the other: the first flow's last change is the older one.
  auto f1 = StartFlow(d, repo, "First.\nFAKE: append one.txt x\n", {});
  auto done1 = WaitFlow(d, f1, 0);
  auto f2 = StartFlow(d, repo, "Second.\nFAKE: append two.txt x\n", {});
  auto done2 = WaitFlow(d, f2, 0);
  std::string writer1 = "flow-" + f1["id"].get<std::string>() + "-writer";
  REQUIRE(d.CliJson({"terminal", "show", writer1})["state"] == "idle");
  auto cleaned = d.CliJson({"flow", "clean"})["flows"];
  REQUIRE(cleaned.size() == 2);
  CHECK(cleaned[0]["id"] == f2["id"]);  // newest first, not oldest change first
  CHECK(cleaned[1]["id"] == f1["id"]);
  CHECK(cleaned[0].value("cleaned", false));
  CHECK(cleaned[1].value("cleaned", false));
  CHECK(!fs::exists(done1["worktree"].get<std::string>()));
  CHECK(!fs::exists(done2["worktree"].get<std::string>()));
  // Their idle terminals are closed; cleaned, neither flow is taken again.
  CHECK(d.CliJson({"terminal", "show", writer1})["state"] == "closed");
  CHECK(d.CliJson({"flow", "clean"})["flows"].empty());
}

TEST_CASE("with max_parallel_writers 1 two flows implement one after the other", "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d, 60, 1);
  std::string log = d.dir() + "/writers";
  auto brief = [&](const std::string& n) {
    return "Flow " + n + ".\nFAKE: append " + log + " start\nFAKE: wait-file " + d.dir() + "/go" +
           n + "\nFAKE: append " + log + " end\nFAKE: append f" + n + ".txt x\n";
  };
  auto f1 = StartFlow(d, repo, brief("1"), {});
  auto f2 = StartFlow(d, repo, brief("2"), {});
  REQUIRE(WaitFor([&] { return Lines(log) == 1; }, 30s));
  // Either flow may win the slot (their worktrees are made off the loop, in either order).
  // Both made their implement task; exactly one writer runs, the other waits for the slot.
  auto show = [&](const nlohmann::json& f) { return d.CliJson({"flow", "show", f["id"].get<std::string>()}); };
  REQUIRE(WaitFor([&] {
    for (const auto& f : {f1, f2}) {
      auto s = show(f);
      if (s["step"] != "implement" || s.value("task_id", std::string("0")) == "0") return false;
    }
    return true;
  }, 30s));
  CHECK(show(f1).value("implement_runs", 0) + show(f2).value("implement_runs", 0) == 1);
  // Both writers may go; with one slot the second starts only after the first ended.
  std::ofstream(d.dir() + "/go1") << "go";
  std::ofstream(d.dir() + "/go2") << "go";
  WaitFlow(d, f1, 0);
  WaitFlow(d, f2, 0);
  std::ifstream in(log);
  std::vector<std::string> seq;
  for (std::string l; std::getline(in, l);) seq.push_back(l);
  CHECK(seq == std::vector<std::string>{"start", "end", "start", "end"});
}

TEST_CASE("flows with overlapping SCOPE implement one after the other, disjoint ones together",
          "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  std::string log = d.dir() + "/writers";
  auto brief = [&](const std::string& n, const std::string& scope) {
    return "Flow " + n + ".\nSCOPE: " + scope + "\nFAKE: append " + log + " start" + n +
           "\nFAKE: wait-file " + d.dir() + "/go" + n + "\nFAKE: append " + log + " end" + n +
           "\nFAKE: append f" + n + ".txt x\n";
  };
  auto a = StartFlow(d, repo, brief("a", "src/net"), {});
  auto b = StartFlow(d, repo, brief("b", "src/net/tcp.cpp, docs"), {});
  // The writer profile runs one at a time (max_concurrent 1): c gets a profile of its own.
  auto c = d.CliJson({"flow", "start", "--repo", repo, "--brief", "-", "--writer", "writer2",
                      "--review", "simple", "--reviewer", "rev"},
                     brief("c", "tools"));
  // c overlaps nobody: it runs beside whichever of a and b got the scope first.
  REQUIRE(WaitFor([&] { return Lines(log) == 2; }, 30s));
  auto show = [&](const json& f) { return d.CliJson({"flow", "show", f["id"].get<std::string>()}); };
  REQUIRE(WaitFor([&] {
    for (const auto& f : {a, b}) {
      auto s = show(f);
      if (s["step"] != "implement" || s.value("task_id", std::string("0")) == "0") return false;
    }
    return true;
  }, 30s));
  CHECK(show(a).value("implement_runs", 0) + show(b).value("implement_runs", 0) == 1);
  CHECK(show(c).value("implement_runs", 0) == 1);
  for (const char* n : {"a", "b", "c"}) std::ofstream(d.dir() + "/go" + n) << "go";
  for (const auto& f : {a, b, c}) WaitFlow(d, f, 0);
  std::ifstream in(log);
  std::vector<std::string> seq;
  for (std::string l; std::getline(in, l);) {
    if (l.back() != 'c') seq.push_back(l.substr(0, l.size() - 1));  // a and b, in order
  }
  CHECK(seq == std::vector<std::string>{"start", "end", "start", "end"});
}

TEST_CASE("a flow's terminals take no other work: one writer per worktree", "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  auto f = StartFlow(d, repo, "Wait.\nFAKE: wait-file " + d.dir() + "/go\nFAKE: append x.txt x\n", {});
  std::string id = f["id"].get<std::string>();
  REQUIRE(WaitFor([&] { return d.CliJson({"flow", "show", id})["step"] == "implement"; }, 30s));
  std::string wt = d.CliJson({"flow", "show", id})["worktree"];
  std::string other = d.CliJson({"task", "create", "--role", "writer", "--brief", "-"},
                                "FAKE: append intruder.txt x\n")["task"]["id"];
  // Directly at the flow's writer terminal, or into its worktree from a hand-made terminal.
  RunResult direct = d.Cli({"dispatch", "--task", other, "--to", "flow-" + id + "-writer"});
  CHECK(direct.exit_code != 0);
  CHECK(direct.err.find("belongs to flow " + id) != std::string::npos);
  d.CliJson({"terminal", "create", "--profile", "writer", "--handle", "side", "--cwd", wt});
  RunResult side = d.Cli({"dispatch", "--task", other, "--to", "side"});
  CHECK(side.exit_code != 0);
  CHECK(side.err.find("flow's worktree") != std::string::npos);
  // Their names are the flows': nobody else may take one.
  RunResult squat = d.Cli({"terminal", "create", "--profile", "writer", "--handle", "flow-99-writer"});
  CHECK(squat.exit_code != 0);
  CHECK(squat.err.find("belong to flows") != std::string::npos);
  // A group never picks them: @worktree: of the flow's worktree names no terminal it may use.
  RunResult group = d.Cli({"dispatch", "--task", other, "--to", "@worktree:" + wt});
  CHECK(group.exit_code != 0);
  std::ofstream(d.dir() + "/go") << "go";
  CHECK(WaitFlow(d, f, 0)["status"] == "ready");
  CHECK(!fs::exists(wt + "/intruder.txt"));
}

TEST_CASE("retention cleans the worktree of a ready flow by itself, keeping its branch", "[flow]") {
  DaemonFixture d;
  // About 1.7 s: old enough soon after it is ready; a pass every second.
  std::string repo = Setup(d, 60, 3, {{"retention", {{"flow_days", 0.00002}, {"interval_s", 1}}}});
  auto f = StartFlow(d, repo, "Done soon.\nFAKE: append kept.txt x\n", {});
  auto done = WaitFlow(d, f, 0);
  std::string wt = done["worktree"];
  CHECK(WaitFor([&] { return !fs::exists(wt); }, 30s));
  CHECK(WaitFor([&] {
    return d.CliJson({"flow", "show", f["id"].get<std::string>()}).value("cleaned", false);
  }, 30s));
  // Not merged: the branch and its work stay.
  CHECK(Git(repo, {"show", done["branch"].get<std::string>() + ":kept.txt"}).out == "x\n");
}

// Seed 001: operational trouble twice in a row moves the implement step to another profile of
// the writer's family (never another family), which resumes the partial work.
TEST_CASE("a writer failing operationally twice is swapped for another of its family", "[flow]") {
  DaemonFixture d;
  // "writer" times out after 2 s; writer2 (the same family) does not.
  std::string repo = Setup(d, 60, 3,
                           {{"retry", {{"base_ms", 50}, {"max_ms", 200}, {"max_attempts", 5}}}}, 2);
  std::string runs = d.dir() + "/runs", briefs = d.dir() + "/brief-";
  auto f = StartFlow(d, repo,
                     "Swap me.\nFAKE: append partial.txt started\nFAKE: sequence " + runs +
                         " hang|hang|ok\nFAKE: if-resumed save-brief " + briefs +
                         "resumed\nFAKE: append hello.txt hi\n",
                     {"--verify", "test -f hello.txt"});
  auto done = WaitFlow(d, f, 0);
  CHECK(done["status"] == "ready");
  CHECK(done["writer"] == "writer2");
  CHECK(done["implement_runs"] == 3);
  // The third attempt ran on the swapped writer's terminal, in the same worktree.
  std::string id = f["id"];
  auto term = d.CliJson({"terminal", "show", "flow-" + id + "-writer-writer2"});
  CHECK(term["profile"] == "writer2");
  CHECK(term["cwd"] == done["worktree"]);
  // It opened with the resume brief (the earlier attempts' partial work).
  std::ifstream in(briefs + "resumed");
  std::string brief((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(brief.rfind("RESUME, DON'T RESTART", 0) == 0);
  CHECK(!d.CliJson({"inbox", "--types", "flow"}).dump().empty());
  CHECK(d.CliJson({"inbox", "--types", "flow"}).dump().find("writer swapped from writer to writer2") !=
        std::string::npos);
}

TEST_CASE("a flow stops for a person once its --budget-usd is spent", "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  // The first round costs $0.40 and fails verify; the fix round would pass the $0.50 cap.
  auto f = StartFlow(d, repo, "Costly.\nFAKE: cost 0.40\nFAKE: append notes.txt line\n",
                     {"--verify", "test $(wc -l < notes.txt) -ge 2", "--budget-usd", "0.5"});
  auto done = WaitFlow(d, f, 5);
  CHECK(done["status"] == "needs_human");
  CHECK(done["budget_usd"].get<double>() == Approx(0.5));
  INFO(done["note"]);
  CHECK(done["note"].get<std::string>().find("budget") != std::string::npos);
  CHECK(done["cost_usd"].get<double>() <= 0.5 + 0.40);
  CHECK(d.Cli({"flow", "start", "--repo", repo, "--brief", "-", "--writer", "writer",
               "--budget-usd", "-1"}, "x").exit_code != 0);
}

TEST_CASE("cancelling a flow during its review stops the reviewer too", "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  std::string reviews = d.dir() + "/reviews";
  auto f = StartFlow(d, repo,
                     "Review forever.\nFAKE: append review.txt FAKE-REVIEW openai * count-wait " +
                         reviews + " " + d.dir() + "/never\n",
                     {});
  REQUIRE(WaitFor([&] { return Lines(reviews) == 1; }, 30s));
  std::string id = f["id"];
  std::string review_id = d.CliJson({"flow", "show", id})["review_id"];
  std::string round_task = d.CliJson({"review", "show", review_id})["rounds"][0]["task_id"];
  CHECK(d.CliJson({"flow", "cancel", id})["status"] == "cancelled");
  CHECK(WaitFor([&] {
    return d.CliJson({"task", "show", round_task})["task"]["status"] == "cancelled";
  }, 20s));
}

TEST_CASE("ship merge fast-forwards base in the linked worktree that has it checked out, "
          "and not when that tree is dirty",
          "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d);
  // The repository's main worktree moves to another branch; base (main) lives in a linked one.
  std::string mainwt = d.dir() + "/main-wt";
  REQUIRE(Git(repo, {"checkout", "-q", "-b", "elsewhere"}).exit_code == 0);
  REQUIRE(Git(repo, {"worktree", "add", "-q", mainwt, "main"}).exit_code == 0);
  auto f = StartFlow(d, repo, "Ship it.\nFAKE: append shipped.txt yes\n",
                     {"--ship", "merge", "--base", "main"});
  auto done = WaitFlow(d, f, 0);
  CHECK(Git(repo, {"rev-parse", "main"}).out == Git(repo, {"rev-parse", done["branch"]}).out);
  CHECK(done["note"].get<std::string>().find("merged: main fast-forwarded") != std::string::npos);
  CHECK(fs::exists(mainwt + "/shipped.txt"));
  // A dirty tree with base checked out: not merged, and the flow says why.
  d.WriteFile("main-wt/README", "changed by a person\n");
  auto g = StartFlow(d, repo, "Ship again.\nFAKE: append again.txt yes\n",
                     {"--ship", "merge", "--base", "main"});
  auto second = WaitFlow(d, g, 0);
  CHECK(second["note"].get<std::string>().find("is not clean") != std::string::npos);
  CHECK(Git(repo, {"rev-parse", "main"}).out != Git(repo, {"rev-parse", second["branch"]}).out);
}

TEST_CASE("a flow without --review takes the config's review.default_mode", "[flow]") {
  DaemonFixture d;
  std::string repo = Setup(d, 60, 3,
                           {{"review", {{"default_mode", "simple"}, {"default_cap", 1},
                                        {"round_timeout_s", 60}}}});
  auto f = d.CliJson({"flow", "start", "--repo", repo, "--brief", "-", "--writer", "writer",
                      "--reviewer", "rev"},
                     "Default mode.\nFAKE: append d.txt x\n");
  CHECK(f["review_mode"] == "simple");
  CHECK(WaitFlow(d, f, 0)["status"] == "ready");
}
