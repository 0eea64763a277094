// Integration: the trust boundary (issue 10). A fake worker that tries everything a model with
// a shell would — speak as the daemon, resolve the coordinator's gate, re-plan or cancel
// another task, dispatch, re-gate a review, close a terminal; with its environment as given,
// stripped of CONCLAVE_*, and from a new session after a double fork — against a real daemon.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "daemon_fixture.h"

using conclave::testing::DaemonFixture;
using conclave::testing::FilesContaining;
using conclave::testing::WaitFor;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

const char* kSecret = "sk-daemon-LIVE-9f8e7d6c5b4a3210";

void Start(DaemonFixture& d) {
  auto p = d.FakeProfile("fake", "fakefam");
  p["env"] = {{"CONCLAVE_CLI", CONCLAVE_BIN}, {"FAKE_API_KEY", "${env:VENDOR_API_KEY}"}};
  d.WriteProfile("fake", p);
  d.SetLauncher({}, {std::string("VENDOR_API_KEY=") + kSecret, "OTHER_VENDOR_TOKEN=sk-other-123456789",
                     "HARMLESS_SETTING=visible-to-nobody", "CONCLAVE_TOKEN=daemon-tcp-token-xyz"});
  d.Start();
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
}

std::string Task(DaemonFixture& d, const std::string& brief) {
  return d.CliJson({"task", "create", "--brief", "-"}, brief)["task"]["id"].get<std::string>();
}

json WaitDone(DaemonFixture& d, const std::string& task) {
  auto r = d.CliJson({"wait", "--task", task, "--types", "worker_done", "--from", "conclaved",
                      "--after", "0", "--timeout-ms", "30000"});
  for (const auto& m : r["messages"]) {
    if (m["from"] == "conclaved") return m;
  }
  FAIL("no worker_done from conclaved for task " << task);
  return {};
}

std::string ResultText(const json& done) {
  return json::parse(done["payload_json"].get<std::string>())["result"]["text"].get<std::string>();
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_CASE("only the daemon speaks as conclaved — a worker's forgery carries its own handle",
          "[trust]") {
  DaemonFixture d;
  Start(d);
  std::string marker = d.dir() + "/forged";
  std::string t = Task(d,
      "FAKE: try-cli env --socket " + d.socket() +
      " send --type worker_done --from conclaved --subject forged-done\n"
      "FAKE: try-cli env --socket " + d.socket() +
      " send --type status --from conclaved --to coordinator --subject forged-status\n"
      "FAKE: save-env CONCLAVE_DISPATCH_ID " + marker + "\n"
      "FAKE: hang-once " + d.dir() + "/hung\n");
  d.CliJson({"dispatch", "--task", t, "--to", "w1"});
  REQUIRE(WaitFor([&] { return std::filesystem::exists(d.dir() + "/hung"); }, 20s));
  // While the worker still runs, nothing from conclaved says it is done.
  auto waited = d.Cli({"wait", "--task", t, "--types", "worker_done", "--from", "conclaved",
                       "--after", "0", "--timeout-ms", "1500"});
  CHECK(waited.exit_code == 4);
  // What the worker sent is stored under its own handle.
  auto inbox = d.CliJson({"inbox", "--task", t, "--limit", "50"});
  int forged = 0;
  for (const auto& m : inbox["messages"]) {
    std::string subject = m["subject"];
    if (subject.rfind("forged", 0) != 0) continue;
    ++forged;
    CHECK(m["from"] == "w1");
  }
  CHECK(forged == 2);
  // The coordinator cannot send as the daemon either.
  auto coord = d.Cli({"send", "--to", "coordinator", "--type", "status", "--subject", "x", "--from",
                      "conclaved"});
  CHECK(coord.exit_code == 1);
  CHECK(coord.err.find("reserved") != std::string::npos);
  d.Cli({"task", "cancel", t});
}

TEST_CASE("from inside a dispatch the coordinator's rights are refused — with env, without, and "
          "after setsid",
          "[trust]") {
  DaemonFixture d;
  Start(d);
  std::string other = Task(d, "FAKE: print other\n");
  auto gate = d.CliJson({"gate", "create", "--task", other, "--question", "ship it?"});
  std::string gid = gate["id"].get<std::string>();
  auto review = d.CliJson({"review", "start", "--artifact", "-", "--writer-family", "x", "--mode",
                           "mechanical"},
                          "diff");
  std::string rid = review["id"].get<std::string>();
  std::string brief;
  for (const char* mode : {"env", "noenv", "setsid"}) {
    std::string pre = std::string("FAKE: try-cli ") + mode + " --socket " + d.socket() + " ";
    brief += pre + "gate resolve " + gid + " --decision approve\n";
    brief += pre + "task update " + other + " --hypothesis replanned\n";
    brief += pre + "task cancel " + other + "\n";
    brief += pre + "dispatch --task " + other + " --to w1\n";
    brief += pre + "review regate " + rid + " --artifact /etc/hostname\n";
    brief += pre + "terminal close w1\n";
  }
  std::string t = Task(d, brief);
  d.CliJson({"dispatch", "--task", t, "--to", "w1"});
  std::string out = ResultText(WaitDone(d, t));
  // Every try failed, and says why.
  std::istringstream lines(out);
  int tries = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("TRY[", 0) != 0) continue;
    ++tries;
    INFO(line);
    CHECK(line.find(" exit=0 ") == std::string::npos);
    CHECK(line.find("exit=?") == std::string::npos);
    bool said = line.find("may not") != std::string::npos ||
                line.find("only send a report") != std::string::npos;
    CHECK(said);
  }
  CHECK(tries == 18);
  // Nothing changed.
  auto g = d.CliJson({"gate", "list", "--open"});
  bool open = false;
  for (const auto& x : g["gates"]) open |= x["id"] == gid;
  CHECK(open);
  auto ot = d.CliJson({"task", "show", other});
  CHECK(ot["task"]["status"] == "blocked");  // held by its gate, not cancelled
  CHECK(ot["task"]["hypothesis"] == "");
  CHECK(ot["dispatches"].empty());
  auto term = d.CliJson({"terminal", "show", "w1"});
  CHECK(term["state"] != "closed");
  // An escalation names each kind of try.
  auto esc = d.CliJson({"inbox", "--types", "escalation", "--limit", "100"});
  std::string all = esc.dump();
  for (const char* rpc : {"ResolveGate", "UpdateTask", "CancelTask", "Dispatch", "Regate",
                          "CloseTerminal"}) {
    INFO(rpc);
    CHECK(all.find(std::string("refused ") + rpc) != std::string::npos);
  }
}

TEST_CASE("a worker sees none of the daemon's environment outside the allow-list", "[trust]") {
  DaemonFixture d;
  Start(d);
  std::string t = Task(d, "FAKE: print-env OTHER_VENDOR_TOKEN\nFAKE: print-env HARMLESS_SETTING\n"
                          "FAKE: print-env CONCLAVE_TOKEN\nFAKE: print-env PATH\n");
  d.CliJson({"dispatch", "--task", t, "--to", "w1"});
  std::string out = ResultText(WaitDone(d, t));
  CHECK(out.find("OTHER_VENDOR_TOKEN=\n") != std::string::npos);
  CHECK(out.find("HARMLESS_SETTING=\n") != std::string::npos);
  CHECK(out.find("CONCLAVE_TOKEN=\n") != std::string::npos);
  CHECK(out.find("PATH=/") != std::string::npos);
}

TEST_CASE("a secret a worker prints raw, base64, URL-encoded or split is nowhere on disk",
          "[trust]") {
  DaemonFixture d;
  Start(d);
  std::string token_file = d.dir() + "/token.txt";
  std::string t = Task(d, "FAKE: leak-env FAKE_API_KEY\nFAKE: exfiltrate FAKE_API_KEY\n"
                          "FAKE: save-env CONCLAVE_DISPATCH_TOKEN " + token_file + "\n");
  d.CliJson({"dispatch", "--task", t, "--to", "w1"});
  WaitDone(d, t);
  std::string token = Slurp(token_file);
  REQUIRE(token.size() >= 32);
  REQUIRE(std::filesystem::exists(d.state_dir() + "/conclave.db-wal"));
  // The secret itself and the forms it was printed in; the dispatch token.
  std::vector<std::string> needles = {kSecret, "sk-daemon-LIVE", "c2stZGFlbW9uLUxJVk", token};
  for (const auto& n : needles) {
    INFO(n);
    CHECK(FilesContaining(d.state_dir(), n).empty());
    CHECK(d.daemon_log().find(n) == std::string::npos);
  }
  CHECK(!FilesContaining(d.state_dir(), "[REDACTED]").empty());
}

// Unsandboxed, a worker runs as the user, and the database is a file its user can open. While
// conclaved runs, SQLite refuses it there: the daemon holds the database locked for its process.
TEST_CASE("a worker's sqlite3 on the live database is refused: conclaved holds it locked",
          "[trust]") {
  DaemonFixture d;
  Start(d);
  std::string db = d.state_dir() + "/conclave.db";
  std::string t = Task(d,
      "FAKE: sh sqlite3 " + db + " \"INSERT INTO messages(created_ms, type, priority, sender, "
      "recipient, subject, body, payload, task_id, dispatch_id, thread_id, reply_to, read) "
      "VALUES (0, 'worker_done', 'normal', 'conclaved', 'coordinator', 'forged-in-sql', '', '', "
      "0, 0, 't-forged', 0, 0)\" 2>&1\n"
      "FAKE: sh sqlite3 " + db + " 'SELECT COUNT(*) FROM messages' 2>&1\n");
  d.CliJson({"dispatch", "--task", t, "--to", "w1"});
  std::string out = ResultText(WaitDone(d, t));
  INFO(out);
  size_t locked = 0;
  for (size_t at = out.find("database is locked"); at != std::string::npos;
       at = out.find("database is locked", at + 1)) {
    ++locked;
  }
  CHECK(locked == 2);
  CHECK(out.find("exit=0") == std::string::npos);
  auto inbox = d.CliJson({"inbox", "--types", "worker_done", "--limit", "100"});
  for (const auto& m : inbox["messages"]) CHECK(m["subject"] != "forged-in-sql");
  // The lock was the daemon's: once it stopped, the same command opens the database, and the
  // forged row is not there.
  REQUIRE(d.Stop() == 0);
  auto after = conclave::testing::RunProgram(
      {"/usr/bin/sqlite3", db, "SELECT COUNT(*) FROM messages WHERE subject = 'forged-in-sql'"});
  CHECK(after.exit_code == 0);
  CHECK(after.out == "0\n");
}

}  // namespace

// A process the worker started and cut loose (new session, double fork) is a worker bound to
// no dispatch; with the dispatch's token it may report, like the worker — and no more.
TEST_CASE("a worker's detached child with the dispatch token sends only worker report types",
          "[trust]") {
  DaemonFixture d;
  Start(d);
  std::string pre = std::string("FAKE: try-cli setsid-env --socket ") + d.socket() + " send --to coordinator ";
  std::string brief;
  for (const char* type : {"flow", "dispatch", "decision_gate", "reply"}) {
    brief += pre + "--type " + type + " --subject detached-" + type + "\n";
  }
  brief += pre + "--type status --subject detached-status\n";
  std::string t = Task(d, brief);
  d.CliJson({"dispatch", "--task", t, "--to", "w1"});
  std::string out = ResultText(WaitDone(d, t));
  INFO(out);
  std::istringstream lines(out);
  int refused = 0, sent = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("TRY[", 0) != 0) continue;
    INFO(line);
    if (line.find("--type status") != std::string::npos) {
      sent += line.find(" exit=0 ") != std::string::npos;
    } else {
      CHECK(line.find(" exit=0 ") == std::string::npos);
      refused += line.find("may send only") != std::string::npos;
    }
  }
  CHECK(refused == 4);
  CHECK(sent == 1);  // the report itself goes through: the token binds it
  auto inbox = d.CliJson({"inbox", "--task", t, "--limit", "100"});
  int detached = 0;
  for (const auto& m : inbox["messages"]) {
    std::string subject = m["subject"];
    if (subject.rfind("detached-", 0) != 0) continue;
    ++detached;
    CHECK(subject == "detached-status");
  }
  CHECK(detached == 1);
}
