// Integration: written ≠ persisted in a real git repository, judged against the dispatch's
// starting point — work the worker committed, a terminal in a subfolder, names that git's
// porcelain would quote — and a claim of a file never written, which is counted.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "daemon_fixture.h"

using conclave::testing::DaemonFixture;
using conclave::testing::RunProgram;
using json = nlohmann::json;

namespace {

void Git(const std::string& repo, std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/git", "-C", repo};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = RunProgram(argv);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
}

// A repository with one commit (README.md and sub/keep.txt) under the fixture's directory.
std::string MakeRepo(DaemonFixture& d) {
  std::string repo = d.dir() + "/repo";
  std::filesystem::create_directories(repo + "/sub");
  Git(repo, {"init", "-q"});
  Git(repo, {"config", "user.email", "t@example.invalid"});
  Git(repo, {"config", "user.name", "t"});
  d.WriteFile("repo/README.md", "hello\n");
  d.WriteFile("repo/sub/keep.txt", "keep\n");
  Git(repo, {"add", "-A"});
  Git(repo, {"commit", "-q", "-m", "start"});
  return repo;
}

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
