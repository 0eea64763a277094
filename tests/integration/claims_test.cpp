// Integration: written ≠ persisted in a real git repository, judged against the dispatch's
// starting point — work the worker committed, a terminal in a subfolder, names that git's
// porcelain would quote — and a claim of a file never written, which is counted.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "daemon_fixture.h"
#include "git_repo.h"

using conclave::testing::DaemonFixture;
using conclave::testing::MakeRepo;
using json = nlohmann::json;

namespace {

void StartAt(DaemonFixture& d, const std::string& cwd) {
  d.WriteProfile("fake", d.FakeProfile("fake", "fakefam"));
  d.Start();
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", cwd});
}

json Run(DaemonFixture& d, const std::string& brief) {
  auto r = d.CliJson({"task", "create", "--role", "writer", "--brief", "-"}, brief);
  std::string id = r["task"]["id"].get<std::string>();
  d.CliJson({"dispatch", "--task", id, "--to", "w1"});
  std::string after = "0";
  for (;;) {
    auto w = d.CliJson({"wait", "--task", id, "--types", "worker_done", "--from", "conclaved",
                        "--after", after, "--timeout-ms", "30000"});
    REQUIRE(!w["messages"].empty());
    for (const auto& m : w["messages"]) {
      if (m["from"] == "conclaved") return json::parse(m["payload_json"].get<std::string>());
    }
    after = w["cursor"].get<std::string>();
  }
}

}  // namespace

TEST_CASE("claims: work the worker committed is persisted, not a lie", "[claims]") {
  DaemonFixture d;
  std::string repo = MakeRepo(d);
  StartAt(d, repo);
  auto p = Run(d, "FAKE: write feature.txt done\n"
                  "FAKE: sh git add feature.txt && git commit -q -m feature\n"
                  "FAKE: changes feature.txt\n");
  INFO(p.dump());
  CHECK(p["outcome"] == "succeeded");
  CHECK(p["failure_kind"] == "");
}

TEST_CASE("claims: a terminal in a subfolder — relative to it or to the repository root",
          "[claims]") {
  DaemonFixture d;
  std::string repo = MakeRepo(d);
  StartAt(d, repo + "/sub");
  auto p = Run(d, "FAKE: write made.txt new\n"
                  "FAKE: write keep.txt changed\n"
                  "FAKE: changes made.txt\n"
                  "FAKE: changes sub/keep.txt\n");
  INFO(p.dump());
  CHECK(p["outcome"] == "succeeded");
}

TEST_CASE("claims: names git's porcelain quotes (non-ASCII, spaces) are accepted", "[claims]") {
  DaemonFixture d;
  std::string repo = MakeRepo(d);
  StartAt(d, repo);
  auto p = Run(d, "FAKE: write café.txt new\n"
                  "FAKE: sh printf 'x\\n' > 'my notes.txt'\n"
                  "FAKE: changes café.txt\n"
                  "FAKE: changes my notes.txt\n");
  INFO(p.dump());
  CHECK(p["outcome"] == "succeeded");
  CHECK(p["result"]["contract"]["changed_files"].size() == 2);
}

TEST_CASE("claims: a file never written is counted as claim_not_persisted", "[claims]") {
  DaemonFixture d;
  std::string repo = MakeRepo(d);
  StartAt(d, repo);
  auto p = Run(d, "FAKE: write real.txt yes\nFAKE: changes real.txt\nFAKE: changes ghost.txt\n"
                  "FAKE: changes README.md\n");
  INFO(p.dump());
  CHECK(p["failure_kind"] == "claim_not_persisted");
  CHECK(p["failure_class"] == "counted");
  CHECK(p["evidence"].get<std::string>().find("ghost.txt") != std::string::npos);
  // Every claim that fails is listed (an untouched file too); the written one is not.
  std::string unpersisted = p["result"]["unpersisted"].dump();
  CHECK(unpersisted.find("ghost.txt: claimed as changed but does not exist") != std::string::npos);
  CHECK(unpersisted.find("README.md: claimed as changed but identical to the dispatch") !=
        std::string::npos);
  CHECK(unpersisted.find("real.txt") == std::string::npos);
}

// A file already dirty when the dispatch started (an earlier, uncommitted edit) differs from
// HEAD — but it is not this dispatch's work unless the worker changed it again.
TEST_CASE("claims: a file that was already dirty at the start counts only if the worker changed it",
          "[claims]") {
  for (bool worker_edits : {false, true}) {
    DYNAMIC_SECTION("the worker " << (worker_edits ? "edits them again" : "leaves them alone")) {
      DaemonFixture d;
      std::string repo = MakeRepo(d);
      StartAt(d, repo);
      // Files edited an hour before the dispatch and never committed. The worker commits
      // README.md unchanged (persisted), appends to sub/keep.txt (persisted), and either
      // leaves old-notes.txt alone (not its work) or appends to it too.
      auto an_hour_ago = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
      for (const char* f : {"README.md", "old-notes.txt", "sub/keep.txt"}) {
        d.WriteFile(std::string("repo/") + f, "edited before the dispatch\n");
        std::filesystem::last_write_time(repo + "/" + f, an_hour_ago);
      }
      // README.md the worker commits as it found it: committed work is work.
      std::string brief = "FAKE: append sub/keep.txt and again by the worker\n"
                          "FAKE: sh git add README.md && git -c user.name=w -c user.email=w@x "
                          "commit -q -m readme README.md\n"
                          "FAKE: changes README.md\n"
                          "FAKE: changes old-notes.txt\nFAKE: changes sub/keep.txt\n";
      if (worker_edits) brief = "FAKE: append old-notes.txt more\n" + brief;
      auto p = Run(d, brief);
      INFO(p.dump());
      if (worker_edits) {
        CHECK(p["outcome"] == "succeeded");
        continue;
      }
      CHECK(p["failure_kind"] == "claim_not_persisted");
      std::string unpersisted = p["result"]["unpersisted"].dump();
      CHECK(unpersisted.find("README.md") == std::string::npos);  // committed
      CHECK(unpersisted.find("old-notes.txt: claimed as changed but it is exactly as it was") !=
            std::string::npos);
      CHECK(unpersisted.find("keep.txt") == std::string::npos);
    }
  }
}
