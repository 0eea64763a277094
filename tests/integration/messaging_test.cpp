// Integration: durable, event-driven messaging over a real socket with the real client.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <thread>

#include "daemon_fixture.h"
#include "streaming_child.h"

using conclave::testing::DaemonFixture;
using conclave::testing::RunResult;
using conclave::testing::WaitFor;
using namespace std::chrono_literals;

TEST_CASE("status answers over a 0600 socket in a private directory", "[messaging]") {
  DaemonFixture d;
  d.Start();
  auto s = d.CliJson({"status"});
  CHECK(s["pid"].get<int>() == d.pid());
  CHECK(s["state_dir"].get<std::string>() == d.state_dir());
  CHECK(s["database_path"].get<std::string>() == d.state_dir() + "/conclave.db");
  CHECK(s["listener"].get<std::string>() == "unix:" + d.socket());
  CHECK(s["schema_version"].get<int>() >= 2);
  struct stat st {};
  REQUIRE(stat(d.socket().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  RunResult human = d.Cli({"status"});
  CHECK(human.exit_code == 0);
  CHECK(human.out.find("conclaved") != std::string::npos);
}

TEST_CASE("status counts follow every write, and a status with no write since reads no SQL",
          "[messaging]") {
  DaemonFixture d;
  d.Start();
  auto count = [](const nlohmann::json& s, const char* name) {
    return s["counts"].contains(name) ? std::stoll(s["counts"][name].get<std::string>()) : 0;
  };
  auto s0 = d.CliJson({"status"});
  auto s1 = d.CliJson({"status"});
  // Served from the snapshot: the store was not read again.
  CHECK(count(s1, "status_rereads") == count(s0, "status_rereads"));
  REQUIRE(d.Cli({"handle", "register", "alice"}).exit_code == 0);
  auto s2 = d.CliJson({"status"});
  CHECK(count(s2, "handles") == count(s1, "handles") + 1);
  CHECK(count(s2, "status_rereads") == count(s1, "status_rereads") + 1);
  REQUIRE(d.Cli({"send", "--to", "alice", "--type", "question", "--subject", "one"}).exit_code == 0);
  auto s3 = d.CliJson({"status"});
  CHECK(count(s3, "messages") == count(s2, "messages") + 1);
  CHECK(count(s3, "unread") == count(s2, "unread") + 1);
  REQUIRE(d.CliJson({"check", "--terminal", "alice"})["messages"].size() == 1);
  auto s4 = d.CliJson({"status"});
  CHECK(count(s4, "unread") == count(s2, "unread"));
  CHECK(count(s4, "messages") == count(s3, "messages"));
  REQUIRE(d.Cli({"task", "create", "--brief", "-"}, "counted").exit_code == 0);
  auto s5 = d.CliJson({"status"});
  int64_t tasks4 = 0, tasks5 = 0;
  for (auto& [k, v] : s4["counts"].items()) {
    if (k.rfind("tasks_", 0) == 0) tasks4 += std::stoll(v.get<std::string>());
  }
  for (auto& [k, v] : s5["counts"].items()) {
    if (k.rfind("tasks_", 0) == 0) tasks5 += std::stoll(v.get<std::string>());
  }
  CHECK(tasks5 == tasks4 + 1);
}

TEST_CASE("a message round trip: send, check marks read, reply in the same thread",
          "[messaging]") {
  DaemonFixture d;
  d.Start();
  REQUIRE(d.Cli({"handle", "register", "alice"}).exit_code == 0);
  auto sent = d.CliJson({"send", "--to", "alice", "--type", "question", "--subject", "hi",
                         "--body", "ping", "--priority", "high", "--task", "7"});
  REQUIRE(sent["messages"].size() == 1);
  auto seq = sent["messages"][0]["seq"].get<std::string>();
  auto first = d.CliJson({"check", "--terminal", "alice"});
  REQUIRE(first["messages"].size() == 1);
  CHECK(first["messages"][0]["body"] == "ping");
  CHECK(first["messages"][0]["priority"] == "high");
  CHECK(first["messages"][0]["task_id"] == "7");
  CHECK(d.CliJson({"check", "--terminal", "alice"})["messages"].empty());  // marked read

  auto reply = d.CliJson({"reply", "--id", seq, "--body", "pong"});
  CHECK(reply["messages"][0]["to"] == "coordinator");
  CHECK(reply["messages"][0]["from"] == "alice");
  CHECK(reply["thread_id"] == sent["thread_id"]);
  auto coord = d.CliJson({"check", "--terminal", "coordinator", "--types", "reply"});
  REQUIRE(coord["messages"].size() == 1);
  CHECK(coord["messages"][0]["body"] == "pong");
  CHECK(coord["messages"][0]["reply_to"] == seq);

  auto inbox = d.CliJson({"inbox", "--limit", "10"});
  REQUIRE(inbox["messages"].size() == 2);
  CHECK(inbox["messages"][0]["type"] == "reply");  // newest first
}

TEST_CASE("check --peek leaves messages unread and --types filters", "[messaging]") {
  DaemonFixture d;
  d.Start();
  d.Cli({"handle", "register", "bob"});
  d.Cli({"send", "--to", "bob", "--type", "status", "--subject", "a"});
  d.Cli({"send", "--to", "bob", "--type", "question", "--subject", "b"});
  CHECK(d.CliJson({"check", "--terminal", "bob", "--peek"})["messages"].size() == 2);
  auto q = d.CliJson({"check", "--terminal", "bob", "--types", "question"});
  REQUIRE(q["messages"].size() == 1);
  CHECK(q["messages"][0]["subject"] == "b");
  CHECK(d.CliJson({"check", "--terminal", "bob"})["messages"].size() == 1);
}

TEST_CASE("wait is woken by a send from another process, and times out with exit 4",
          "[messaging]") {
  DaemonFixture d;
  d.Start();
  d.Cli({"handle", "register", "w"});
  auto head = d.CliJson({"status"})["last_seq"].get<std::string>();
  auto waiting = std::async(std::launch::async, [&] {
    auto start = std::chrono::steady_clock::now();
    RunResult r = d.Cli({"--json", "wait", "--to", "w", "--types", "question", "--after", head,
                         "--timeout-ms", "20000"});
    return std::make_pair(r, std::chrono::steady_clock::now() - start);
  });
  // Wait until the daemon has the waiter registered, then send.
  REQUIRE(WaitFor([&] { return d.CliJson({"status"})["counts"]["waiters"] == "1"; }, 10s));
  auto sent_at = std::chrono::steady_clock::now();
  d.Cli({"send", "--to", "w", "--type", "status", "--subject", "not this one"});
  d.Cli({"send", "--to", "w", "--type", "question", "--subject", "wake up"});
  auto [r, took] = waiting.get();
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = r.Json();
  REQUIRE(j["messages"].size() == 1);
  CHECK(j["messages"][0]["subject"] == "wake up");
  CHECK(j["cursor"] == j["messages"][0]["seq"]);
  CHECK(j["timed_out"] == false);
  CHECK(std::chrono::steady_clock::now() - sent_at < 5s);
  CHECK(took < 15s);

  auto start = std::chrono::steady_clock::now();
  RunResult t = d.Cli({"wait", "--to", "w", "--types", "escalation", "--timeout-ms", "300"});
  CHECK(t.exit_code == 4);
  CHECK(t.out.find("timed out") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start >= 300ms);
}

TEST_CASE("wait returns at once when a match already exists after the cursor", "[messaging]") {
  DaemonFixture d;
  d.Start();
  d.Cli({"handle", "register", "x"});
  d.Cli({"send", "--to", "x", "--type", "status", "--subject", "s1", "--task", "5"});
  auto r = d.CliJson({"wait", "--task", "5", "--timeout-ms", "5000"});
  REQUIRE(r["messages"].size() == 1);
  CHECK(r["messages"][0]["subject"] == "s1");
  auto cursor = r["cursor"].get<std::string>();
  RunResult again = d.Cli({"wait", "--task", "5", "--after", cursor, "--timeout-ms", "200"});
  CHECK(again.exit_code == 4);
}

TEST_CASE("every acknowledged message survives SIGKILL, and a cursor resumes exactly",
          "[messaging][crash]") {
  DaemonFixture d;
  d.Start();
  d.Cli({"handle", "register", "r"});
  std::vector<std::string> seqs;
  for (int i = 0; i < 20; ++i) {
    auto s = d.CliJson({"send", "--to", "r", "--type", "status", "--subject",
                        "m" + std::to_string(i)});
    seqs.push_back(s["messages"][0]["seq"].get<std::string>());
  }
  d.Kill();
  d.Start();
  auto all = d.CliJson({"inbox", "--to", "r", "--limit", "100"});
  CHECK(all["messages"].size() == 20);
  // Resume from the 10th message's cursor: exactly the 11th comes next.
  auto next = d.CliJson({"wait", "--to", "r", "--after", seqs[9], "--timeout-ms", "1000"});
  REQUIRE(!next["messages"].empty());
  CHECK(next["messages"][0]["subject"] == "m10");
  CHECK(next["messages"].size() == 10);
  // Sequence numbers keep growing after the restart.
  auto after = d.CliJson({"send", "--to", "r", "--type", "status", "--subject", "late"});
  CHECK(std::stoll(after["messages"][0]["seq"].get<std::string>()) > std::stoll(seqs.back()));
}

TEST_CASE("a wait spanning a daemon restart resumes from its cursor and misses nothing",
          "[messaging][crash]") {
  DaemonFixture d;
  d.Start();
  d.Cli({"handle", "register", "q"});
  auto head = d.CliJson({"status"})["last_seq"].get<std::string>();
  auto waiting = std::async(std::launch::async, [&] {
    return d.Cli({"--json", "wait", "--to", "q", "--after", head, "--timeout-ms", "30000"});
  });
  REQUIRE(WaitFor([&] { return d.CliJson({"status"})["counts"]["waiters"] == "1"; }, 10s));
  d.Kill();
  d.Start();
  d.Cli({"send", "--to", "q", "--type", "status", "--subject", "after restart"});
  RunResult r = waiting.get();
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.Json()["messages"][0]["subject"] == "after restart");
}

TEST_CASE("group addresses fan out to one delivery per recipient with one thread",
          "[messaging]") {
  DaemonFixture d;
  d.Start();
  for (auto n : {"g1", "g2", "g3"}) d.Cli({"handle", "register", n});
  auto r = d.CliJson({"send", "--to", "@all", "--type", "status", "--subject", "all hands",
                      "--from", "g1"});
  REQUIRE(r["messages"].size() == 3);  // g2, g3 and coordinator; not the sender
  std::set<std::string> to;
  for (const auto& m : r["messages"]) {
    to.insert(m["to"].get<std::string>());
    CHECK(m["thread_id"] == r["thread_id"]);
  }
  CHECK(to == std::set<std::string>{"coordinator", "g2", "g3"});
  CHECK(d.CliJson({"check", "--terminal", "g2"})["messages"].size() == 1);
  CHECK(d.CliJson({"check", "--terminal", "g1"})["messages"].empty());
}

TEST_CASE("bad input is refused with the field named, and nothing is dropped silently",
          "[messaging]") {
  DaemonFixture d;
  d.Start();
  RunResult unknown = d.Cli({"send", "--to", "nobody", "--type", "status", "--subject", "x"});
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("not found") != std::string::npos);
  CHECK(unknown.err.find("nobody") != std::string::npos);
  RunResult group = d.Cli({"send", "--to", "@family:none", "--type", "status", "--subject", "s"});
  CHECK(group.exit_code == 1);
  CHECK(group.err.find("no members") != std::string::npos);
  RunResult type = d.Cli({"send", "--to", "coordinator", "--type", "gossip", "--subject", "s"});
  CHECK(type.exit_code == 1);
  CHECK(type.err.find("type") != std::string::npos);
  RunResult payload = d.Cli({"send", "--to", "coordinator", "--type", "status", "--subject", "s", "--payload", "{"});
  CHECK(payload.err.find("payload") != std::string::npos);
  std::string big(1024 * 1024 + 1, 'b');
  std::string file = d.WriteFile("big.txt", big);
  RunResult oversize = d.Cli({"send", "--to", "coordinator", "--type", "status", "--subject", "s", "--body-file", file});
  CHECK(oversize.exit_code == 1);
  CHECK(oversize.err.find("body") != std::string::npos);
  CHECK(oversize.err.find("exceeds") != std::string::npos);
  RunResult hostile = d.Cli({"handle", "register", "bad\nname"});
  CHECK(hostile.exit_code == 1);
  CHECK(hostile.err.find("handle") != std::string::npos);
  // Nothing of the refused sends was stored.
  CHECK(d.CliJson({"inbox"})["messages"].empty());
  // Usage errors exit 2.
  CHECK(d.Cli({"send", "--bogus"}).exit_code == 2);
}

TEST_CASE("the client says how to start the daemon when it is unreachable (exit 3)",
          "[messaging]") {
  DaemonFixture d;  // not started
  RunResult r = d.Cli({"status"});
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("conclaved") != std::string::npos);
}

TEST_CASE("a second daemon on the same state dir refuses to start", "[messaging]") {
  DaemonFixture d;
  d.Start();
  RunResult second = conclave::testing::RunProgram(
      {CONCLAVED_BIN, "--state-dir", d.state_dir(), "--listen", "unix:" + d.dir() + "/other.sock",
       "--profiles", d.profiles_dir()});
  CHECK(second.exit_code == 1);
  CHECK(second.err.find("already running") != std::string::npos);
  CHECK(d.Cli({"status"}).exit_code == 0);  // the first one is unharmed
}

TEST_CASE("a stale socket is replaced — a regular file at the path is refused", "[messaging]") {
  DaemonFixture d;
  d.Start();
  d.Kill();  // leaves the socket file behind
  struct stat st {};
  REQUIRE(stat(d.socket().c_str(), &st) == 0);
  d.Start();
  CHECK(d.Cli({"status"}).exit_code == 0);
  d.Stop();

  std::string path = d.dir() + "/plain";
  std::ofstream(path) << "not a socket";
  RunResult r = conclave::testing::RunProgram({CONCLAVED_BIN, "--state-dir", d.dir() + "/st2",
                                               "--listen", "unix:" + path, "--profiles",
                                               d.profiles_dir()});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("not a socket") != std::string::npos);
}

TEST_CASE("SIGTERM stops the daemon cleanly with exit 0 and pending waits end", "[messaging]") {
  DaemonFixture d;
  d.Start();
  d.Cli({"handle", "register", "z"});
  auto waiting = std::async(std::launch::async, [&] {
    return d.Cli({"wait", "--to", "z", "--timeout-ms", "2500"});
  });
  REQUIRE(WaitFor([&] { return d.CliJson({"status"})["counts"]["waiters"] == "1"; }, 10s));
  auto start = std::chrono::steady_clock::now();
  CHECK(d.Stop() == 0);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  // The client keeps its cursor and retries until its own deadline, then says the daemon is gone.
  RunResult w = waiting.get();
  CHECK(w.exit_code == 3);
  CHECK(w.err.find("cannot reach conclaved") != std::string::npos);
}

TEST_CASE("watch streams events after a cursor as JSON lines", "[messaging]") {
  DaemonFixture d;
  d.Start();
  d.Cli({"handle", "register", "v"});
  d.Cli({"send", "--to", "v", "--type", "status", "--subject", "before"});
  // Replay from 0 plus live events. The watch never ends by itself (it reconnects across
  // restarts): read its lines as they come, then stop it.
  conclave::testing::StreamingChild w(
      {CONCLAVE_BIN, "--socket", d.socket(), "--json", "watch", "--after", "0", "--to", "v"},
      d.dir() + "/watch.err");
  REQUIRE(WaitFor([&] { return d.CliJson({"status"})["counts"]["watchers"] == "1"; }, 10s));
  d.Cli({"send", "--to", "v", "--type", "question", "--subject", "live"});
  REQUIRE(w.ReadUntil([](const std::string& l) { return l.find("\"live\"") != std::string::npos; },
                      20s));
  std::vector<std::string> subjects;
  for (const auto& line : w.lines()) {
    subjects.push_back(nlohmann::json::parse(line)["subject"].get<std::string>());
  }
  CHECK(subjects == std::vector<std::string>{"before", "live"});
}

TEST_CASE("sd_notify: READY once serving, WATCHDOG pings, STOPPING on shutdown", "[messaging]") {
  DaemonFixture d;
  std::string path = d.dir() + "/notify.sock";
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  d.SetLauncher({"/usr/bin/env", "NOTIFY_SOCKET=" + path, "WATCHDOG_USEC=200000"}, {});
  d.Start();
  std::string got;
  auto read_until = [&](const std::string& want) {
    return WaitFor(
        [&] {
          char buf[512];
          ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
          if (n > 0) got.append(buf, static_cast<size_t>(n)).append("\n");
          return got.find(want) != std::string::npos;
        },
        5s);
  };
  CHECK(read_until("READY=1"));
  CHECK(read_until("WATCHDOG=1"));
  CHECK(d.Stop() == 0);
  CHECK(read_until("STOPPING=1"));
  close(fd);
}

TEST_CASE("a database written by a newer Conclave is refused with a clear error", "[messaging]") {
  DaemonFixture d;
  d.Start();
  d.Stop();
  RunResult sql = conclave::testing::RunProgram(
      {"/usr/bin/sqlite3", d.state_dir() + "/conclave.db",
       "INSERT INTO schema_migrations(version, name, applied_ms) VALUES (999, 'future', 0);"});
  REQUIRE(sql.exit_code == 0);
  RunResult r = conclave::testing::RunProgram({CONCLAVED_BIN, "--state-dir", d.state_dir(),
                                               "--listen", "unix:" + d.socket(), "--profiles",
                                               d.profiles_dir()});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("newer") != std::string::npos);
  CHECK(r.err.find("999") != std::string::npos);
}

// conclaved keeps its database to itself (store/wal_write_vfs): another process that holds it
// open, a sqlite3 shell left on it, keeps conclaved from starting, and the error says so.
TEST_CASE("conclaved will not start beside another process holding its database and says why",
          "[messaging]") {
  DaemonFixture d;
  d.Start();
  d.Stop();
  sqlite3* other = nullptr;
  REQUIRE(sqlite3_open((d.state_dir() + "/conclave.db").c_str(), &other) == SQLITE_OK);
  // One read: in WAL mode the connection keeps its shared lock on the file from then on.
  REQUIRE(sqlite3_exec(other, "SELECT COUNT(*) FROM handles", nullptr, nullptr, nullptr) ==
          SQLITE_OK);
  // Bounded: a conclaved that started anyway would serve until stopped (timeout's exit 124).
  RunResult r = conclave::testing::RunProgram({"/usr/bin/timeout", "60", CONCLAVED_BIN, "--state-dir",
                                               d.state_dir(), "--listen", "unix:" + d.socket(),
                                               "--profiles", d.profiles_dir()});
  sqlite3_close(other);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("conclave.db is open in another process") != std::string::npos);
  CHECK(r.err.find("database is locked") != std::string::npos);
  // Once that process let go, conclaved starts on the same database.
  d.Start();
  CHECK(d.CliJson({"status"})["schema_version"].get<int>() > 0);
}

TEST_CASE("a loopback TCP listener requires the bearer token", "[messaging]") {
  DaemonFixture d;
  int probe = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  getsockname(probe, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  close(probe);
  std::string addr = "tcp:127.0.0.1:" + std::to_string(port);
  std::string cfg = d.WriteFile("tcp.json", R"({"listen": ")" + addr + R"(", "tcp_token": "s3cret-token"})");
  // Flags win over the file: drop the fixture's unix listener by starting by hand.
  RunResult bad = conclave::testing::RunProgram(
      {CONCLAVED_BIN, "--state-dir", d.dir() + "/x", "--listen", "tcp:10.1.2.3:9"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("loopback") != std::string::npos);
  pid_t pid = 0;
  {
    std::vector<std::string> argv = {CONCLAVED_BIN, "--config", cfg, "--state-dir", d.dir() + "/tcp",
                                     "--profiles", d.profiles_dir()};
    std::vector<std::string> env = conclave::testing::DaemonEnv();
    std::vector<char*> av, ev;
    for (auto& s : argv) av.push_back(s.data());
    av.push_back(nullptr);
    for (auto& e : env) ev.push_back(e.data());
    ev.push_back(nullptr);
    REQUIRE(posix_spawn(&pid, CONCLAVED_BIN, nullptr, nullptr, av.data(), ev.data()) == 0);
  }
  auto cli = [&](const std::vector<std::string>& env) {
    return conclave::testing::RunProgram({CONCLAVE_BIN, "--socket", addr, "status"}, "", env);
  };
  REQUIRE(WaitFor([&] { return cli({"CONCLAVE_TOKEN=s3cret-token"}).exit_code == 0; }, 20s));
  RunResult none = cli({});
  CHECK(none.exit_code == 1);
  CHECK(none.err.find("unauthenticated") != std::string::npos);
  CHECK(cli({"CONCLAVE_TOKEN=wrong"}).exit_code == 1);
  kill(pid, SIGTERM);
  int st = 0;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 0);
}
