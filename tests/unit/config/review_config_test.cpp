// Unit tests: the review settings of the config (config/config) — defaults, and reviewers
// never placed inside the state directory.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "config/config.h"

using namespace conclave;

namespace {

// Config files in a temporary directory removed at the end of the test.
struct ConfigFiles {
  std::string dir;
  int n = 0;
  ConfigFiles() {
    char t[] = "/tmp/cvcXXXXXX";
    dir = mkdtemp(t);
  }
  ~ConfigFiles() { std::filesystem::remove_all(dir); }
  std::string Write(const std::string& body) {
    std::string path = dir + "/c" + std::to_string(++n) + ".json";
    std::ofstream(path) << body;
    return path;
  }
};

TEST_CASE("review settings: defaults, and a workdir per state directory outside it",
          "[config][review]") {
  config::Flags flags;
  flags.state_dir = "/tmp/cvc-state-a";
  auto a = config::LoadConfig(flags);
  REQUIRE(a.ok());
  CHECK(a->review.round_timeout_s == 900);
  CHECK(a->review.round_max_attempts == 2);
  CHECK(a->review.max_fix_rounds == 2);
  CHECK(a->review.workdir.rfind(a->state_dir + "/", 0) != 0);
  CHECK(a->review.workdir == "/tmp/cvc-state-a-reviews");
  flags.state_dir = "/tmp/cvc-state-b";
  auto b = config::LoadConfig(flags);
  REQUIRE(b.ok());
  CHECK(b->review.workdir != a->review.workdir);  // two daemons never share round directories
}

TEST_CASE("review settings: a workdir inside the state directory is refused, naming the key",
          "[config][review]") {
  ConfigFiles files;
  config::Flags flags;
  flags.state_dir = "/tmp/cvc-state-c";
  flags.config_file = files.Write(R"({"review": {"workdir": "/tmp/cvc-state-c/reviews"}})");
  auto r = config::LoadConfig(flags);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("review.workdir"));
  flags.config_file = files.Write(R"({"review": {"round_max_attempts": 0}})");
  CHECK_THAT(config::LoadConfig(flags).status().message(), Catch::Contains("round_max_attempts"));
  flags.config_file = files.Write(R"({"review": {"max_fix_rounds": 3, "workdir": "/var/tmp/rv"}})");
  auto ok = config::LoadConfig(flags);
  REQUIRE(ok.ok());
  CHECK(ok->review.max_fix_rounds == 3);
  CHECK(ok->review.workdir == "/var/tmp/rv");
}

}  // namespace
