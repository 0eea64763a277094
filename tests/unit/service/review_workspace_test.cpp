// Service-level tests of reviewer isolation (service/review_workspace): a round runs in a
// directory of its own holding only the artifact (and a read-only worktree of the reviewed
// commit), outside the state directory, with the CLI's read-only arguments.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "review_harness.h"

namespace conclave {
namespace {
namespace fs = std::filesystem;
using testing::ReviewHarness;

bool Inside(const std::string& path, const std::string& dir) {
  return (path + "/").rfind(dir + "/", 0) == 0;
}

TEST_CASE("a reviewer round runs in its own directory with only the artifact, outside the "
          "state directory, read-only",
          "[service][review][isolation]") {
  ReviewHarness h;
  auto& chal = h.Profile("chal");
  chal.isolate_home = true;
  chal.readonly_args = {"--sandbox", "read-only"};
  service::StartReviewInput in;
  in.mode = "simple";
  in.primary = "chal";
  in.artifact = "diff --git a/a b/a\n+x\n";
  auto v = h.Start(in);
  REQUIRE(v.ok());
  auto* run = h.NextRun();
  REQUIRE(run);
  const auto& spec = run->plan.spec;
  CHECK_FALSE(Inside(spec.cwd, h.config.state_dir));
  CHECK(Inside(spec.cwd, h.config.review.workdir));
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(spec.cwd)) entries.push_back(e.path().filename());
  CHECK(entries == std::vector<std::string>{"artifact.diff"});
  std::ifstream a(spec.cwd + "/artifact.diff");
  std::stringstream ss;
  ss << a.rdbuf();
  CHECK(ss.str() == in.artifact);
  CHECK((fs::status(spec.cwd + "/artifact.diff").permissions() & fs::perms::owner_write) ==
        fs::perms::none);
  for (const auto& e : spec.env) {
    if (e.rfind("HOME=", 0) == 0 || e.rfind("TMPDIR=", 0) == 0) {
      CHECK_FALSE(Inside(e.substr(e.find('=') + 1), h.config.state_dir));
    }
  }
  CHECK(std::find(spec.argv.begin(), spec.argv.end(), "read-only") != spec.argv.end());
  // Its directory goes once the review has its verdict.
  h.Answer("[]");
  REQUIRE(h.Done(v->review.id));
  CHECK(h.RunUntil([&] { return !fs::exists(spec.cwd); }));
}

TEST_CASE("a review of a repository gets a detached worktree of the reviewed commit, made off "
          "the loop",
          "[service][review][isolation]") {
  ReviewHarness h;
  const std::string sha(40, 'a');
  h.commands.When({"git", "-C", "/src/project", "rev-parse"}, 0, sha + "\n");
  h.commands.When({"git", "-C", "/src/project", "worktree", "add"}, 0);
  service::StartReviewInput in;
  in.mode = "simple";
  in.primary = "chal";
  in.repo = "/src/project";
  in.commit = "main";
  auto v = h.Start(in);
  REQUIRE(v.ok());
  CHECK(v->review.repo_commit == sha);
  auto* run = h.NextRun();
  REQUIRE(run);
  bool added = false;
  for (const auto& c : h.commands.calls) {
    if (c.size() > 5 && c[3] == "worktree" && c[4] == "add") {
      added = c == std::vector<std::string>{"git", "-C", "/src/project", "worktree", "add",
                                            "--detach", run->plan.spec.cwd + "/repo", sha};
    }
  }
  CHECK(added);
  CHECK_THAT(run->plan.stdin_data, Catch::Contains("./repo") && Catch::Contains(sha));
  // A commit that is not one, or one that reads as an option, is refused naming the field.
  in.commit = "nope";
  h.commands.rules.clear();
  h.commands.When({"git"}, 1);
  auto bad = h.Start(in);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK_THAT(bad.status().message(), Catch::Contains("commit"));
  in.commit = "--upload-pack=evil";
  CHECK_THAT(h.Start(in).status().message(), Catch::Contains("commit"));
  in.repo = "relative/path";
  CHECK_THAT(h.Start(in).status().message(), Catch::Contains("repo"));
}

TEST_CASE("a round whose worktree cannot be made is a missing reviewer: gate-absent",
          "[service][review][isolation]") {
  ReviewHarness h;
  h.commands.When({"git", "-C", "/src/project", "rev-parse"}, 0, std::string(40, 'b') + "\n");
  h.commands.When({"git", "-C", "/src/project", "worktree", "add"}, 128);
  service::StartReviewInput in;
  in.mode = "simple";
  in.primary = "chal";
  in.repo = "/src/project";
  auto v = h.Start(in);
  REQUIRE(v.ok());
  REQUIRE(h.Done(v->review.id));
  auto r = h.Review(v->review.id);
  CHECK(r.verdict == "gate-absent");
  CHECK_THAT(r.reason, Catch::Contains("worktree"));
  CHECK(h.launcher.launches.empty());
}

}  // namespace
}  // namespace conclave
