// Unit tests: the worker output contract (domain/worker_contract).
#include <catch2/catch.hpp>

#include "domain/worker_contract.h"

namespace conclave::domain {
namespace {



TEST_CASE("worker contract: heading styles, status and changed files", "[review]") {
  const std::string text =
      "Some preamble.\n"
      "SUMMARY: FAIL — two tests still red\n"
      "## Evidence\n"
      "ran ctest: 2 failures\n"
      "```\nRISKS: inside a fence is not a heading\n```\n"
      "**CHANGES**\n"
      "- src/a.cpp: did x\n"
      "* `src/b.h`\n"
      "M src/c.cpp\n"
      "R old/name.cpp -> new/name.cpp\n"
      "1. docs/guide.md (new)\n"
      "- Added tests for the parser.\n"
      "- /etc/passwd: absolute\n"
      "- ../outside.cpp\n"
      "- Updated `include/x.h` and `src/a.cpp:12`\n"
      "Risks\n"
      "none known\n"
      "**Blockers:** none\n";
  const WorkerContract c = ParseWorkerContract(text);
  CHECK(c.ok());
  CHECK(c.status == "FAIL");
  CHECK(c.sections.at("SUMMARY") == "FAIL — two tests still red");
  CHECK_THAT(c.sections.at("EVIDENCE"), Catch::Contains("inside a fence"));
  CHECK(c.sections.at("RISKS") == "none known");
  CHECK(c.sections.at("BLOCKERS") == "none");
  CHECK(c.changed_files == std::vector<std::string>{"src/a.cpp", "src/b.h", "src/c.cpp",
                                                    "new/name.cpp", "docs/guide.md",
                                                    "include/x.h"});
  const nlohmann::json j = ContractToJson(c);
  CHECK(j.at("ok") == true);
  CHECK(j.at("changed_files").size() == 6);
}

TEST_CASE("worker contract: non-ASCII names, and names with spaces in backticks, are paths",
          "[review][claims]") {
  const WorkerContract c = ParseWorkerContract(
      "SUMMARY: PASS\nEVIDENCE: x\nCHANGES:\n- café.txt: new\n- `my notes.txt`: new\n"
      "- ran `make test now` and `see src/a now`\n- src/dir with space/file.c\nRISKS: none\n"
      "BLOCKERS: none\n");
  CHECK(c.changed_files == std::vector<std::string>{"café.txt", "my notes.txt", "src/dir"});
}

TEST_CASE("worker contract: missing sections, none, STATUS line", "[review]") {
  WorkerContract c = ParseWorkerContract(
      "**Summary:** BLOCKED waiting for credentials\nCHANGES:\nnone\nSTATUS: passed\n");
  CHECK_FALSE(c.ok());
  CHECK(c.missing == std::vector<std::string>{"EVIDENCE", "RISKS", "BLOCKERS"});
  CHECK(c.changed_files.empty());
  CHECK(c.status == "PASS");  // an explicit STATUS line wins over the summary
  c = ParseWorkerContract("SUMMARY\nBLOCKED on review\nEVIDENCE:\nCHANGES: -\nRISKS:\nBLOCKER:\n");
  CHECK(c.ok());
  CHECK(c.status == "BLOCKED");
  CHECK(c.changed_files.empty());
  c = ParseWorkerContract("SUMMARY: Failing tests fixed\n## STATUS\nFAIL\n");
  CHECK(c.status == "FAIL");
  CHECK(ParseWorkerContract("SUMMARY: Fixed it\n").status.empty());
  CHECK(ParseWorkerContract("").missing.size() == 5);
}

TEST_CASE("worker contract: a heading word is at most 16 letters, whatever follows on its line",
          "[review]") {
  // A worker may print megabytes of letters on one line before its contract: that line is
  // body text, and a word one letter past the longest section name is not a heading.
  std::string text = "SUMMARY: done\n" + std::string(8u << 20, 'x') + "\n";
  text += "CHANGESCHANGESCHA: not a heading\nSummaries: not a heading either\n";
  text += "EVIDENCE: ran it\nCHANGES:\n- src/a.cpp\nRISKS: none\nBLOCKERS: none\n";
  WorkerContract c = ParseWorkerContract(text);
  CHECK(c.ok());
  CHECK(c.changed_files == std::vector<std::string>{"src/a.cpp"});
  REQUIRE(c.sections.count("SUMMARY"));
  const std::string& summary = c.sections.at("SUMMARY");
  CHECK(summary.size() > (8u << 20));
  CHECK(summary.find("CHANGESCHANGESCHA: not a heading") != std::string::npos);
  CHECK(summary.find("Summaries: not a heading either") != std::string::npos);
}

}  // namespace
}  // namespace conclave::domain
