// End-to-end at the CLI + parser level: one real CLI run alone exactly as its shipped profile
// launches it (tests/e2e/run_profile.js in a loopback-only namespace with the mock), its
// output parsed by the daemon's parser. Covers what the daemon does not wire yet: reviewer
// schema_args / readonly_args and large-brief delivery. Skipped (exit 77) when npm cannot
// install the CLIs.
#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "exec/output_parser.h"

using namespace conclave::e2e;
using conclave::domain::FailureKind;

namespace {

std::string WorkDir(const std::string& name) {
  char t[] = "/tmp/cve2eXXXXXX";
  std::string dir = mkdtemp(t);
  return dir + "/" + name;
}

const std::string kSchema = kE2eDir + "/fixtures/findings_schema.json";

}  // namespace

TEST_CASE("codex as a reviewer: --output-schema and --sandbox read-only, findings parsed",
          "[e2e][e2e-cli]") {
  CliBinDir();
  std::string dir = WorkDir("codex-review");
  CliRun run = RunCli(dir, "codex",
                      "You are a reviewer. Review this diff and answer in the findings schema.\n"
                      "diff --git a/a.cpp b/a.cpp\n+for (int i = 0; i <= n; ++i) sum += a[i];\n"
                      "MOCK:findings\n",
                      {"--review", "--schema", kSchema});
  INFO(run.out << run.err << run.mock_log);
  CHECK(run.exit_code == 0);
  // The CLI asked the provider for a schema-shaped answer (Responses text.format).
  CHECK(run.mock_log.find("json_schema=1") != std::string::npos);
  auto p = conclave::exec::ParseCliOutput("codex-jsonl", run.out, run.err, run.exit_code);
  CHECK(p.failure == FailureKind::kNone);
  REQUIRE(p.structured_output);
  const auto& findings = (*p.structured_output)["findings"];
  REQUIRE(findings.is_array());
  REQUIRE(findings.size() == 1);
  CHECK(findings[0]["id"] == "F1");
  CHECK(findings[0]["severity"] == "HIGH");
  CHECK(findings[0]["location"]["path"] == "a.cpp");
  std::filesystem::remove_all(dir.substr(0, dir.rfind('/')));
}

TEST_CASE("reviewer read-only modes stop a write for every CLI", "[e2e][e2e-cli][e2e-more]") {
  CliBinDir();
  for (const char* profile : {"claude", "codex", "qwen", "gemini", "opencode", "copilot"}) {
    INFO(profile);
    std::string dir = WorkDir(profile);
    std::string cwd = dir + "/cwd";
    std::filesystem::create_directories(cwd);
    CliRun run = RunCli(dir, profile,
                        "Review only. MOCK:tool_worker_done CMD: touch WROTE; echo TOOL_RAN\n",
                        {"--readonly", "--cwd", cwd});
    INFO(run.out.substr(0, 2000) << run.err.substr(0, 2000));
    CHECK_FALSE(std::filesystem::exists(cwd + "/WROTE"));
    // ... while the same brief as a writer does write (the check can fail).
    std::string wdir = WorkDir(std::string(profile) + "-writer");
    std::string wcwd = wdir + "/cwd";
    std::filesystem::create_directories(wcwd);
    RunCli(wdir, profile, "Write. MOCK:tool_worker_done CMD: touch WROTE; echo TOOL_RAN\n",
           {"--cwd", wcwd});
    CHECK(std::filesystem::exists(wcwd + "/WROTE"));
    std::filesystem::remove_all(dir.substr(0, dir.rfind('/')));
    std::filesystem::remove_all(wdir.substr(0, wdir.rfind('/')));
  }
}

TEST_CASE("claude and qwen reviewers: --json-schema answers are structured output",
          "[e2e][e2e-cli][e2e-more]") {
  CliBinDir();
  for (auto [profile, parser] : {std::pair{"claude", "claude-stream-json"},
                                 std::pair{"qwen", "qwen-stream-json"}}) {
    INFO(profile);
    std::string dir = WorkDir(profile);
    CliRun run = RunCli(dir, profile, "Review this diff. MOCK:findings\n",
                        {"--review", "--schema", kSchema});
    CHECK(run.mock_log.find("json_schema=1") != std::string::npos);
    auto p = conclave::exec::ParseCliOutput(parser, run.out, run.err, run.exit_code);
    CHECK(p.failure == FailureKind::kNone);
    REQUIRE(p.structured_output);
    CHECK((*p.structured_output)["findings"][0]["id"] == "F1");
    std::filesystem::remove_all(dir.substr(0, dir.rfind('/')));
  }
}

TEST_CASE("an argument brief past 100 KiB goes by brief_large, never E2BIG",
          "[e2e][e2e-cli][e2e-more]") {
  CliBinDir();
  // qwen takes a positional prompt too: a test profile passing the brief as an argument,
  // with "brief_large": "stdin" for large ones.
  std::string dir = WorkDir("qwen-large");
  std::filesystem::create_directories(dir);
  auto p = json::parse(ReadAll(std::string(CONCLAVE_SOURCE_DIR) + "/profiles/qwen.json"));
  p["brief"] = "arg";
  p["brief_large"] = "stdin";
  std::string profile = dir + "/qwen-arg.json";
  std::ofstream(profile) << p.dump(2);
  std::string brief;
  for (int i = 0; brief.size() < 300 * 1024; ++i)
    brief += "Context line " + std::to_string(i) + ": " + std::string(60, 'x') + "\n";
  brief += "End of the brief. MOCK:contract\n";
  std::string brief_file = dir + "/brief.txt";
  std::ofstream(brief_file) << brief;
  RunResult r = RunProgram({"/bin/bash", kE2eDir + "/capture.sh", dir + "/run", profile,
                            "@" + brief_file},
                           "", {"PATH=" + PathWithClis()});
  INFO(r.out << r.err);
  std::string log = ReadAll(dir + "/run/mock.log");
  INFO(log);
  CHECK(log.find("user_bytes=") != std::string::npos);
  auto at = log.find("user_bytes=");
  CHECK(std::atol(log.c_str() + at + 11) >= 300 * 1024);
  auto parsed = conclave::exec::ParseCliOutput("qwen-stream-json", ReadAll(dir + "/run/stdout.txt"),
                                               ReadAll(dir + "/run/stderr.txt"), 0);
  CHECK(parsed.failure == FailureKind::kNone);
  std::filesystem::remove_all(dir.substr(0, dir.rfind('/')));
}
