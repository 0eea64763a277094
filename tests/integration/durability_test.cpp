// Integration: durability of acknowledged writes across a crash while the WAL is being
// checkpointed in the background. Many clients send concurrently, with bodies large enough
// that the WAL passes the checkpoint threshold several times; the daemon is SIGKILLed right
// after the last acknowledgement; after a restart every acknowledged message is there, whole.
#include <catch2/catch.hpp>

#include <future>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "daemon_fixture.h"

using conclave::testing::DaemonFixture;
using conclave::testing::RunResult;

TEST_CASE("every acknowledged Send survives SIGKILL during background checkpoints",
          "[messaging][crash]") {
  DaemonFixture d;
  d.Start();
  d.Cli({"handle", "register", "r"});
  constexpr int kClients = 6, kPerClient = 20;
  // 64 KiB bodies: 16 pages a message, ~1900 pages in all (the threshold is 1000).
  std::string body_file = d.WriteFile("body.txt", std::string(64 << 10, 'b'));
  std::mutex mu;
  std::map<std::string, std::string> acked;  // seq → subject
  std::vector<std::future<void>> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.push_back(std::async(std::launch::async, [&, c] {
      for (int i = 0; i < kPerClient; ++i) {
        std::string subject = "c" + std::to_string(c) + "-" + std::to_string(i);
        RunResult r = d.Cli({"--json", "send", "--to", "r", "--type", "status", "--subject",
                             subject, "--body-file", body_file});
        if (r.exit_code != 0) continue;  // not acknowledged: no promise made
        std::lock_guard<std::mutex> lk(mu);
        acked[r.Json()["messages"][0]["seq"].get<std::string>()] = subject;
      }
    }));
  }
  for (auto& c : clients) c.get();
  d.Kill();
  REQUIRE(acked.size() == kClients * kPerClient);  // all were acknowledged while it ran

  d.Start();
  auto all = d.CliJson({"inbox", "--to", "r", "--limit", "1000"});
  std::map<std::string, std::string> found;
  for (const auto& m : all["messages"]) {
    found[m["seq"].get<std::string>()] = m["subject"].get<std::string>();
    CHECK(m["body"].get<std::string>().size() == (64u << 10));
  }
  CHECK(found == acked);
}
