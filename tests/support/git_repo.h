// Real git repositories for integration tests: run git in one, make one with a first commit.
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "daemon_fixture.h"

namespace conclave::testing {

inline void Git(const std::string& repo, std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/git", "-C", repo};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = RunProgram(argv);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
}

// A repository with one commit (README.md and sub/keep.txt) under the fixture's directory.
inline std::string MakeRepo(DaemonFixture& d) {
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

}  // namespace conclave::testing
