// Unit tests: what a reviewer dispatch is started with (exec/launch_plan) — the findings schema
// from the one definition, schema_args and readonly_args, a working directory and HOME of its
// own outside the state directory.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "domain/findings_schema.h"
#include "exec/launch_plan.h"
#include "in_child.h"

using namespace conclave;

namespace {

exec::Profile Cli() {
  exec::Profile p;
  p.name = "codexish";
  p.family = "openai";
  p.command = {"codex", "exec", "-"};
  p.isolate_home = true;
  p.schema_args = {"--output-schema", "${findings_schema_file}"};
  p.readonly_args = {"--sandbox", "read-only"};
  return p;
}

exec::LaunchRequest Request(const exec::Profile& p, const std::map<std::string, std::string>& env) {
  exec::LaunchRequest req;
  req.profile = &p;
  req.terminal = "review-codexish";
  req.terminal_cwd = "/state/reviews";
  req.dispatch_dir = "/state/dispatches/9";
  req.brief = "the brief";
  req.daemon_env = &env;
  return req;
}

bool Has(const std::vector<std::string>& argv, const std::vector<std::string>& seq) {
  return std::search(argv.begin(), argv.end(), seq.begin(), seq.end()) != argv.end();
}

TEST_CASE("a reviewer dispatch gets the schema file, schema_args and readonly_args",
          "[exec][review]") {
  std::map<std::string, std::string> env = {{"HOME", "/root"}};
  exec::Profile p = Cli();
  auto req = Request(p, env);
  req.reviewer = true;
  req.workdir = "/tmp/conclave-0/reviews/review-1/rev1-round0/work";
  req.private_dir = "/tmp/conclave-0/reviews/review-1/rev1-round0/dispatch-9";
  auto plan = exec::PlanLaunch(req);
  REQUIRE(plan.ok());
  const auto& argv = plan->spec.argv;
  CHECK(Has(argv, {"--output-schema", "/state/dispatches/9/findings_schema.json"}));
  CHECK(Has(argv, {"--sandbox", "read-only"}));
  bool schema_file = false;
  for (const auto& [path, content] : plan->files) {
    if (path != "/state/dispatches/9/findings_schema.json") continue;
    schema_file = true;
    CHECK(nlohmann::json::parse(content) == domain::FindingsSchema());
  }
  CHECK(schema_file);
  // Its own directory, its HOME outside the state directory.
  CHECK(plan->spec.cwd == req.workdir);
  bool home_outside = false;
  for (const auto& e : plan->spec.env) {
    if (e.rfind("HOME=", 0) == 0) home_outside = e == "HOME=" + req.private_dir + "/home";
    if (e.rfind("PWD=", 0) == 0) CHECK(e == "PWD=" + req.workdir);
  }
  CHECK(home_outside);
  // The transcript stays with the daemon.
  CHECK(plan->transcript_path == "/state/dispatches/9/transcript.log");
}

TEST_CASE("the findings_schema reference is the schema text, and a writer dispatch gets none of it",
          "[exec][review]") {
  std::map<std::string, std::string> env = {{"HOME", "/root"}};
  exec::Profile p = Cli();
  p.schema_args = {"--json-schema", "${findings_schema}"};
  auto req = Request(p, env);
  req.reviewer = true;
  auto plan = exec::PlanLaunch(req);
  REQUIRE(plan.ok());
  auto it = std::find(plan->spec.argv.begin(), plan->spec.argv.end(), "--json-schema");
  REQUIRE(it + 1 < plan->spec.argv.end());
  CHECK(nlohmann::json::parse(*(it + 1)) == domain::FindingsSchema());
  req.reviewer = false;
  auto writer = exec::PlanLaunch(req);
  REQUIRE(writer.ok());
  CHECK_FALSE(Has(writer->spec.argv, {"--json-schema"}));
  CHECK_FALSE(Has(writer->spec.argv, {"--sandbox"}));
  CHECK(writer->spec.cwd == "/state/reviews");
}

TEST_CASE("a schema_args reference that cannot resolve names the field", "[exec][review]") {
  std::map<std::string, std::string> env;
  exec::Profile p = Cli();
  p.readonly_args = {"${nope}"};
  auto req = Request(p, env);
  req.reviewer = true;
  auto plan = exec::PlanLaunch(req);
  REQUIRE_FALSE(plan.ok());
  CHECK_THAT(plan.status().message(), Catch::Contains("readonly_args"));
}

}  // namespace

// PrepareLaunch runs on the launcher's thread: a home file a worker replaced with a FIFO (its
// directory holds HOME) or a device is refused at once, never waited on; a link to a regular
// file still works.
TEST_CASE("home_files are copied only from regular files: a FIFO or a device is refused at once",
          "[exec][launch]") {
  char t[] = "/tmp/cvhfXXXXXX";
  std::string dir = mkdtemp(t);
  struct Remove {
    std::string d;
    ~Remove() { std::filesystem::remove_all(d); }
  } remove{dir};
  const std::string fifo = dir + "/auth.json", real = dir + "/real.json", link = dir + "/link.json";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  std::ofstream(real) << "{\"token\": \"abc\"}";
  std::filesystem::create_symlink(real, link);
  // Refused, computed in a child: a launch that waits on the FIFO fails the check.
  auto refused = [&](const std::string& from) {
    return conclave::testing::InChild([&] {
      exec::LaunchPlan plan;
      plan.home_files = {{from, dir + "/home/copy.json"}};
      Status s = PrepareLaunch(plan);
      return !s.ok() && s.message().find("regular file") != std::string::npos;
    });
  };
  auto ok = [&](const std::string& from) {
    exec::LaunchPlan plan;
    plan.home_files = {{from, dir + "/home/copy.json"}};
    return PrepareLaunch(plan).ok();
  };
  CHECK(refused(fifo));
  CHECK(refused("/dev/zero"));
  CHECK(ok(link));
}

TEST_CASE("a worker gets the allow-listed part of the daemon's environment and what its "
          "profile names, never the daemon's own or a near miss",
          "[exec]") {
  std::map<std::string, std::string> env = {
      {"PATH", "/bin"},          {"LC_ALL", "C.UTF-8"},      {"LC_", "bare"},
      {"NODE_EXTRA_CA_CERTS", "/ca.pem"}, {"no_proxy", "localhost"},
      {"PAT", "prefix of PATH"}, {"PATHS", "longer than PATH"}, {"LANGUAGES", "x"},
      {"lc_all", "lower case"},  {"ANTHROPIC_API_KEY", "sk-secret"},
      {"CONCLAVE_TOKEN", "daemon"}, {"CONCLAVE_SOCKET", "daemon's"}, {"MY_TOOL_HOME", "/opt"}};
  exec::Profile p = Cli();
  p.isolate_home = false;
  p.inherit_env = {"MY_TOOL_HOME", "CONCLAVE_TOKEN"};
  auto plan = exec::PlanLaunch(Request(p, env));
  REQUIRE(plan.ok());
  std::map<std::string, std::string> got;
  for (const auto& e : plan->spec.env) got[e.substr(0, e.find('='))] = e.substr(e.find('=') + 1);
  for (const char* k : {"PATH", "LC_ALL", "LC_", "NODE_EXTRA_CA_CERTS", "no_proxy", "MY_TOOL_HOME"}) {
    CHECK(got.count(k) == 1);
    CHECK(got[k] == env[k]);
  }
  for (const char* k : {"PAT", "PATHS", "LANGUAGES", "lc_all", "ANTHROPIC_API_KEY"}) {
    CHECK(got.count(k) == 0);
  }
  // The daemon's own variables never pass, named or not; the worker's are set afresh.
  CHECK(got.count("CONCLAVE_TOKEN") == 0);
  CHECK(got["CONCLAVE_SOCKET"] != "daemon's");
}

TEST_CASE("a plan starts from the profile's base environment when the caller keeps it, and "
          "builds the same environment as without it",
          "[exec]") {
  std::map<std::string, std::string> env = {{"PATH", "/bin"}, {"HOME", "/root"},
                                            {"ANTHROPIC_API_KEY", "sk-secret"},
                                            {"MY_TOOL_HOME", "/opt"}};
  exec::Profile p = Cli();
  p.inherit_env = {"MY_TOOL_HOME"};
  // What RunSupervisor keeps per profile.
  const auto base = exec::WorkerBaseEnv(p, env);
  auto fresh = exec::PlanLaunch(Request(p, env));
  auto req = Request(p, env);
  req.base_env = &base;
  auto kept = exec::PlanLaunch(req);
  REQUIRE(fresh.ok());
  REQUIRE(kept.ok());
  CHECK(kept->spec.env == fresh->spec.env);
  // The kept one is what the plan starts from; isolation and Conclave's variables still go
  // on top of it.
  auto marked = base;
  marked["FROM_THE_KEPT_BASE"] = "1";
  marked["HOME"] = "/not-isolated";
  req.base_env = &marked;
  auto plan = exec::PlanLaunch(req);
  REQUIRE(plan.ok());
  const auto& e = plan->spec.env;
  CHECK(std::count(e.begin(), e.end(), "FROM_THE_KEPT_BASE=1") == 1);
  CHECK(std::count(e.begin(), e.end(), "HOME=/state/dispatches/9/home") == 1);
  CHECK(std::count(e.begin(), e.end(), "CONCLAVE_DISPATCH_ID=0") == 1);
}

TEST_CASE("a worker's stdin is /dev/null exactly when its brief does not go there", "[exec]") {
  std::map<std::string, std::string> env = {{"HOME", "/root"}};
  exec::Profile p = Cli();
  auto req = Request(p, env);
  auto by_stdin = exec::PlanLaunch(req);
  REQUIRE(by_stdin.ok());
  CHECK(by_stdin->stdin_data == "the brief");
  CHECK_FALSE(by_stdin->spec.stdin_null);  // a pipe the brief is written to
  p.brief = "arg";
  auto by_arg = exec::PlanLaunch(req);
  REQUIRE(by_arg.ok());
  CHECK(by_arg->spec.argv.back() == "the brief");
  CHECK(by_arg->stdin_data.empty());
  CHECK(by_arg->spec.stdin_null);
}
