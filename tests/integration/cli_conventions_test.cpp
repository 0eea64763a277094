// Integration: the CLI's conventions — global flags before or after the subcommand, `payload`
// next to `payload_json`, exit 3 only for an unreachable daemon, completion scripts and
// versions generated from the real binary, `watch` filters and its reconnect across a daemon
// restart (every event exactly once).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <set>

#include "daemon_fixture.h"
#include "streaming_child.h"

using conclave::testing::DaemonFixture;
using conclave::testing::RunProgram;
using conclave::testing::RunResult;
using conclave::testing::StreamingChild;
using conclave::testing::WaitFor;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

RunResult Conclave(const std::vector<std::string>& args, const std::string& stdin_data = "",
                   const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv = {CONCLAVE_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv, stdin_data, env);
}

json Parse(const RunResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

std::string Watchers(const DaemonFixture& d) {
  return d.CliJson({"status"})["counts"]["watchers"].get<std::string>();
}

}  // namespace

TEST_CASE("global flags work before and after the subcommand, for every command", "[cli]") {
  DaemonFixture d;
  d.Start();
  const std::string s = d.socket();
  // The three spellings the issue names.
  CHECK(Parse(Conclave({"status", "--json", "--socket", s}))["pid"] == d.pid());
  CHECK(Parse(Conclave({"--json", "status"}, "", {"CONCLAVE_SOCKET=" + s}))["pid"] == d.pid());
  CHECK(Parse(Conclave({"status", "--json"}, "", {"CONCLAVE_SOCKET=" + s}))["pid"] == d.pid());
  CHECK(Parse(Conclave({"--socket", s, "status", "--json"}))["pid"] == d.pid());
  // Every read-only command, with both flags after the (nested) subcommand.
  const std::vector<std::vector<std::string>> commands = {
      {"handle", "list"},
      {"inbox"},
      {"profile", "list"},
      {"terminal", "list"},
      {"task", "list"},
      {"gate", "list"},
      {"review", "list"},
      {"report"},
      {"check", "--terminal", "coordinator", "--peek"},
      {"wait", "--timeout-ms", "1", "--after", "0"},
      {"doctor"}};
  for (auto args : commands) {
    args.insert(args.end(), {"--json", "--socket", s});
    RunResult r = Conclave(args);
    INFO("conclave " << args[0] << ": " << r.err);
    CHECK(r.exit_code != 2);  // no "argument was not expected"
    CHECK(r.err.find("not expected") == std::string::npos);
    CHECK_FALSE(json::parse(r.out, nullptr, false).is_discarded());
  }
  // A failing call still prints one JSON document, with flags after a nested subcommand.
  RunResult missing = Conclave({"task", "show", "999", "--json", "--socket", s});
  CHECK(missing.exit_code == 1);
  json err = json::parse(missing.out);
  CHECK(err["error"]["code"] == 5);  // NOT_FOUND
  CHECK(err["error"]["unreachable"] == false);
  // A flag given in neither place is still a usage error.
  CHECK(Conclave({"status", "--jsonx", "--socket", s}).exit_code == 2);
}

TEST_CASE("json output: messages carry payload as a JSON value next to payload_json", "[cli]") {
  DaemonFixture d;
  d.Start();
  d.Cli({"handle", "register", "p"});
  auto sent = d.CliJson({"send", "--to", "p", "--type", "status", "--subject", "with", "--payload",
                         R"({"n":[1,2],"ok":true})"});
  const json& m = sent["messages"][0];
  CHECK(m["payload_json"].is_string());
  CHECK(json::parse(m["payload_json"].get<std::string>()) == m["payload"]);
  CHECK(m["payload"] == json{{"n", {1, 2}}, {"ok", true}});
  d.CliJson({"send", "--to", "p", "--type", "status", "--subject", "without"});
  // Everywhere messages appear: inbox, check, wait.
  auto inbox = d.CliJson({"inbox", "--to", "p"});
  REQUIRE(inbox["messages"].size() == 2);
  CHECK(inbox["messages"][0]["subject"] == "without");
  CHECK(inbox["messages"][0]["payload"].is_null());
  CHECK(inbox["messages"][0]["payload_json"] == "");
  CHECK(inbox["messages"][1]["payload"]["n"][1] == 2);
  auto check = d.CliJson({"check", "--terminal", "p", "--peek"});
  CHECK(check["messages"][0]["payload"]["ok"] == true);
  auto wait = d.CliJson({"wait", "--to", "p", "--after", "0", "--timeout-ms", "1000"});
  CHECK(wait["messages"][0]["payload"]["n"][0] == 1);
}

TEST_CASE("exit 3 only when the daemon cannot be reached - its own refusals are exit 1", "[cli]") {
  DaemonFixture d;  // not started: nothing listens on the socket
  RunResult down = d.Cli({"--json", "status"});
  CHECK(down.exit_code == 3);
  CHECK(down.err.find("cannot reach conclaved") != std::string::npos);
  CHECK(json::parse(down.out)["error"]["unreachable"] == true);
  // watch retries only once it was connected: unreachable at the start is exit 3 at once.
  CHECK(d.Cli({"watch", "--after", "0"}).exit_code == 3);

  // RESOURCE_EXHAUSTED from the daemon (a spent task budget) prints as itself, exit 1.
  json cfg = {{"retry", {{"base_ms", 50}, {"max_ms", 200}, {"max_attempts", 2}}}};
  d.WriteProfile("fake", d.FakeProfile("fake", "fakefam"));
  d.Start({"--config", d.WriteFile("config.json", cfg.dump())});
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string id = d.CliJson({"task", "create", "--brief", "-", "--budget-usd", "0.1"},
                             "FAKE: cost 0.30\n")["task"]["id"]
                       .get<std::string>();
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  REQUIRE(WaitFor(
      [&] {
        auto t = d.CliJson({"task", "show", id})["task"];
        return t["status"] != "dispatched" && t["spent_usd"].get<double>() > 0.1;
      },
      60s));
  RunResult refused = d.Cli({"dispatch", "--task", id, "--to", "w1", "--json"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("resource exhausted") != std::string::npos);
  json e = json::parse(refused.out)["error"];
  CHECK(e["code"] == 8);
  CHECK(e["unreachable"] == false);
}

TEST_CASE("completion scripts come from the command tree and parse in their shell", "[cli]") {
  for (const std::string shell : {"bash", "zsh", "fish"}) {
    RunResult r = Conclave({"completion", shell});
    INFO(shell << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    // Every command and a nested flag are in it.
    for (const char* word : {"status", "terminal", "read", "--follow", "watch", "--json",
                             "--socket", "completion", "review", "regate"}) {
      CHECK(r.out.find(word) != std::string::npos);
    }
  }
  CHECK(Conclave({"completion", "tcsh"}).exit_code == 2);

  // bash: the script parses, and completes subcommands and a nested command's flags.
  RunResult bash = Conclave({"completion", "bash"});
  std::string script =
      bash.out +
      "COMP_WORDS=(conclave ter); COMP_CWORD=1; _conclave; echo \"${COMPREPLY[*]}\"\n"
      "COMP_WORDS=(conclave terminal read h1 --fo); COMP_CWORD=4; _conclave; "
      "echo \"${COMPREPLY[*]}\"\n"
      "COMP_WORDS=(conclave --json task create --); COMP_CWORD=4; _conclave; "
      "echo \"${COMPREPLY[*]}\"\n";
  RunResult run = RunProgram({"/bin/bash", "-c", script});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  std::istringstream lines(run.out);
  std::string l1, l2, l3;
  std::getline(lines, l1);
  std::getline(lines, l2);
  std::getline(lines, l3);
  CHECK(l1 == "terminal");
  CHECK(l2 == "--follow");
  CHECK(l3.find("--brief") != std::string::npos);
  CHECK(l3.find("--json") != std::string::npos);  // global flags are offered after subcommands
  // zsh and fish (deploy/install-deps.sh installs both): the scripts load and complete.
  if (access("/usr/bin/zsh", X_OK) == 0) {
    RunResult zsh = RunProgram(
        {"/usr/bin/zsh", "-c",
         "autoload -U compinit && compinit -u -D; " + Conclave({"completion", "zsh"}).out +
             "\n__conclave_subs 'conclave terminal'; __conclave_optkind 'conclave task create' "
             "--brief"});
    INFO(zsh.err);
    CHECK(zsh.exit_code == 0);
    CHECK(zsh.out == "create list show close read\nFILE\n");
  }
  if (access("/usr/bin/fish", X_OK) == 0) {
    RunResult fish = RunProgram(
        {"/usr/bin/fish", "-c",
         Conclave({"completion", "fish"}).out +
             "\ncomplete -C 'conclave terminal read h1 --fo'; complete -C 'conclave --json ter'"});
    INFO(fish.err);
    CHECK(fish.exit_code == 0);
    CHECK(fish.out.rfind("--follow\t", 0) == 0);
    CHECK(fish.out.find("\nterminal\t") != std::string::npos);
  }
}

TEST_CASE("conclave --version and conclaved --version print the version and the commit", "[cli]") {
  RunResult c = Conclave({"--version"});
  RunResult d = RunProgram({CONCLAVED_BIN, "--version"});
  CHECK(c.exit_code == 0);
  CHECK(d.exit_code == 0);
  std::string want = std::string("(commit ") + CONCLAVE_TEST_GIT_COMMIT + ")";
  CHECK(c.out.rfind("conclave ", 0) == 0);
  CHECK(c.out.find(want) != std::string::npos);
  CHECK(d.out.rfind("conclaved ", 0) == 0);
  CHECK(d.out.find(want) != std::string::npos);
}

TEST_CASE("watch takes the same filters as wait (types, to, from, task)", "[cli]") {
  DaemonFixture d;
  d.Start();
  for (const char* h : {"alice", "bob"}) d.Cli({"handle", "register", h});
  StreamingChild w({CONCLAVE_BIN, "--socket", d.socket(), "watch", "--json", "--to", "alice",
                    "--from", "bob", "--task", "7", "--types", "question,reply"},
                   d.dir() + "/watch.err");
  REQUIRE(WaitFor([&] { return Watchers(d) == "1"; }, 10s));
  auto send = [&](const std::string& to, const std::string& from, const std::string& type,
                  const std::string& task, const std::string& subject) {
    REQUIRE(d.Cli({"send", "--to", to, "--from", from, "--type", type, "--task", task, "--subject",
                   subject})
                .exit_code == 0);
  };
  send("alice", "bob", "question", "7", "match-1");
  send("bob", "bob", "question", "7", "wrong-to");
  send("alice", "carol", "question", "7", "wrong-from");
  send("alice", "bob", "status", "7", "wrong-type");
  send("alice", "bob", "question", "8", "wrong-task");
  send("alice", "bob", "reply", "7", "match-2");
  REQUIRE(w.ReadUntil([](const std::string& l) { return l.find("match-2") != std::string::npos; },
                      20s));
  std::vector<std::string> subjects;
  for (const auto& l : w.lines()) subjects.push_back(json::parse(l)["subject"].get<std::string>());
  CHECK(subjects == std::vector<std::string>{"match-1", "match-2"});
}

TEST_CASE("watch survives daemon restarts: every event exactly once, none missed", "[cli]") {
  DaemonFixture d;
  d.Start();
  d.Cli({"handle", "register", "v"});
  auto send = [&](const std::string& subject) {
    REQUIRE(d.Cli({"send", "--to", "v", "--type", "status", "--subject", subject}).exit_code == 0);
  };
  send("before-watch");  // "from now" excludes it
  StreamingChild w({CONCLAVE_BIN, "--socket", d.socket(), "--json", "watch", "--to", "v"},
                   d.dir() + "/watch.err");
  REQUIRE(WaitFor([&] { return Watchers(d) == "1"; }, 10s));
  // A restart before the first event: the cursor was fixed when the watch started.
  REQUIRE(d.Stop() == 0);
  d.Start();
  send("a1");  // probably committed before the watch has reconnected
  send("a2");
  REQUIRE(
      w.ReadUntil([](const std::string& l) { return l.find("\"a2\"") != std::string::npos; }, 30s));
  // A restart mid-stream; events committed while the client is away are replayed.
  REQUIRE(d.Stop() == 0);
  d.Start();
  send("b1");
  send("b2");
  send("b3");
  REQUIRE(
      w.ReadUntil([](const std::string& l) { return l.find("\"b3\"") != std::string::npos; }, 30s));
  REQUIRE(WaitFor([&] { return Watchers(d) == "1"; }, 10s));
  send("b4");  // live again
  REQUIRE(
      w.ReadUntil([](const std::string& l) { return l.find("\"b4\"") != std::string::npos; }, 30s));
  std::vector<std::string> subjects;
  std::set<int64_t> seqs;
  int64_t last = 0;
  for (const auto& l : w.lines()) {
    json m = json::parse(l);
    subjects.push_back(m["subject"].get<std::string>());
    int64_t seq = std::stoll(m["seq"].get<std::string>());
    CHECK(seq > last);  // strictly increasing: nothing repeated
    last = seq;
    seqs.insert(seq);
  }
  CHECK(subjects == std::vector<std::string>{"a1", "a2", "b1", "b2", "b3", "b4"});
  CHECK(w.err().find("reconnecting") != std::string::npos);
}
