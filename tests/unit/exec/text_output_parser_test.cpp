// Tests for daemon/exec/text_output_parser.cpp ("text").
#include <catch2/catch.hpp>

#include "cli_fixture.h"

using conclave::domain::FailureKind;
using conclave::exec::ParseCliOutput;
using conclave::testing::LoadCliRun;

TEST_CASE("text parser: stdout is the answer — a non-zero exit names the last line",
          "[parser][text]") {
  auto run = LoadCliRun("text", "success");
  auto ok = ParseCliOutput("text", run.out, run.err, run.exit_code);
  CHECK(ok.failure == FailureKind::kNone);
  CHECK(ok.result_text == run.out);
  auto bad = ParseCliOutput("text", "partial\n", "warming up\nfatal: cannot open a.txt\n\n", 2);
  CHECK(bad.failure == FailureKind::kNonZeroExit);
  CHECK(bad.rule == "exit-status");
  CHECK(bad.evidence == "exit 2: fatal: cannot open a.txt");
  CHECK(ParseCliOutput("text", "line1\nlast words\n", "", 1).evidence == "exit 1: last words");
  // Output never classifies a text run: "401" from a test suite is just output.
  auto words = ParseCliOutput("text", "HTTP 401 Unauthorized\nconnection refused\n", "", 1);
  CHECK(words.failure == FailureKind::kNonZeroExit);
  // Killed by a signal: left to the caller, which knows why.
  CHECK(ParseCliOutput("text", "x", "", -1).failure == FailureKind::kNone);
}
