// Test helper: loads a captured CLI run from tests/e2e/fixtures/<cli>/<format>/ — stdout
// (<case>.txt), stderr (<case>.stderr.txt, when the capture had any) and the exit status
// recorded in that directory's meta.json. The parser tests read the captures themselves,
// never pasted copies; tests/e2e/capture-fixtures.sh re-creates them from the real CLIs.
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "exec/output_parser.h"

namespace conclave::testing {

struct CliRun {
  std::string out, err;
  int exit_code = 0;
  std::string note;
};

inline std::string ReadFixtureFile(const std::string& path, bool required) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (required) FAIL("missing fixture " << path);
    return {};
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// dir: "claude/stream-json"; name: "http429".
inline CliRun LoadCliRun(const std::string& dir, const std::string& name) {
  const std::string base = std::string(CONCLAVE_SOURCE_DIR) + "/tests/e2e/fixtures/" + dir + "/";
  CliRun r;
  r.err = ReadFixtureFile(base + name + ".stderr.txt", false);
  r.out = ReadFixtureFile(base + name + ".txt", r.err.empty());
  auto meta = nlohmann::json::parse(ReadFixtureFile(base + "meta.json", true), nullptr, false);
  REQUIRE(meta.is_object());
  INFO(dir << "/" << name);
  REQUIRE(meta.contains(name));
  r.exit_code = meta[name].value("exit", 0);
  r.note = meta[name].value("note", "");
  return r;
}

inline exec::ParsedOutput ParseRun(const std::string& parser, const CliRun& r) {
  return exec::ParseCliOutput(parser, r.out, r.err, r.exit_code);
}

inline bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// The canonical contract text the mock answers with.
inline const std::string kContractText =
    "SUMMARY: Mock worker completed the task as briefed.\n"
    "EVIDENCE: scripted reply from the Conclave mock provider.\n"
    "CHANGES: none\nRISKS: none\nBLOCKERS: none";

}  // namespace conclave::testing
