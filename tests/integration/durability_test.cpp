// Integration: durability of acknowledged writes across a crash while the WAL is being
// checkpointed in the background. Many clients send concurrently, with bodies large enough
// that the WAL passes the checkpoint threshold; once a background checkpoint has run, more
// acknowledged sends follow and the daemon is SIGKILLed right after the last acknowledgement;
// after a restart every acknowledged message is there, whole.
#include <catch2/catch.hpp>

#include <future>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "daemon_fixture.h"

using conclave::testing::DaemonFixture;
using conclave::testing::RunResult;
using conclave::testing::WaitFor;
using namespace std::chrono_literals;

TEST_CASE("every acknowledged Send survives SIGKILL during background checkpoints",
          "[messaging][crash]") {
  DaemonFixture d;
  d.Start();
  d.Cli({"handle", "register", "r"});
  constexpr int kClients = 6, kPerClient = 50, kAfter = 5;
  // 64 KiB bodies: ~66 pages of 1 KiB a message, ~20k in all (the threshold: 16 MiB, 16384).
  std::string body_file = d.WriteFile("body.txt", std::string(64 << 10, 'b'));
  std::mutex mu;
  std::map<std::string, std::string> acked;  // seq → subject
  auto send_all = [&](const std::string& phase, int per_client) {
    std::vector<std::future<void>> clients;
    for (int c = 0; c < kClients; ++c) {
      clients.push_back(std::async(std::launch::async, [&, c] {
        for (int i = 0; i < per_client; ++i) {
          std::string subject = phase + "-c" + std::to_string(c) + "-" + std::to_string(i);
          RunResult r = d.Cli({"--json", "send", "--to", "r", "--type", "status", "--subject",
                               subject, "--body-file", body_file});
          if (r.exit_code != 0) continue;  // not acknowledged: no promise made
          std::lock_guard<std::mutex> lk(mu);
          acked[r.Json()["messages"][0]["seq"].get<std::string>()] = subject;
        }
      }));
    }
    for (auto& c : clients) c.get();
  };
  send_all("a", kPerClient);
  // A background checkpoint ran (the WAL passed the threshold)...
  REQUIRE(WaitFor(
      [&] {
        auto n = d.CliJson({"status"})["counts"]["wal_checkpoints"].get<std::string>();
        return std::stoll(n) > 0;
      },
      60s));
  // ...and more acknowledged writes land after it, in a WAL that restarted or grew on.
  send_all("b", kAfter);
  d.Kill();
  REQUIRE(acked.size() == kClients * (kPerClient + kAfter));  // all were acknowledged

  d.Start();
  // Read everything back from the start, 100 at a time (a reply is capped at 16 MiB).
  std::map<std::string, std::string> found;
  std::string cursor = "0";
  for (;;) {
    RunResult page = d.Cli({"--json", "wait", "--to", "r", "--after", cursor,
                            "--timeout-ms", "200"});
    if (page.exit_code == 4) break;  // timed out: nothing more after the cursor
    REQUIRE(page.exit_code == 0);
    auto j = page.Json();
    for (const auto& m : j["messages"]) {
      found[m["seq"].get<std::string>()] = m["subject"].get<std::string>();
      CHECK(m["body"].get<std::string>().size() == (64u << 10));
    }
    cursor = j["cursor"].get<std::string>();
  }
  CHECK(found == acked);
}
