// Tests for daemon/exec/error_classifier.cpp: wording and status classification, bounded
// retry-after hints, and the unstructured fallback that never reads CLI events.
#include <catch2/catch.hpp>

#include "exec/parser_support.h"

using conclave::domain::FailureKind;
using conclave::exec::ParsedOutput;
using namespace conclave::exec::parser_detail;

TEST_CASE("HTTP status and wording", "[error_classifier]") {
  CHECK(FindHttpStatus("API Error: Request rejected (429) · Rate limit") == 429);
  CHECK(FindHttpStatus("exceeded retry limit, last status: 429 Too Many Requests") == 429);
  CHECK(FindHttpStatus("unexpected status 401 Unauthorized: bad key") == 401);
  CHECK(FindHttpStatus("[API Error: {\"error\":{\"code\":500,\"message\":\"x\"}}]") == 500);
  CHECK(FindHttpStatus("Process exited with code 0") == std::nullopt);
  CHECK(FindHttpStatus("status 99999999999999999999") == std::nullopt);
  CHECK(ClassifyError("We're currently experiencing high demand", std::nullopt) ==
        FailureKind::kProviderUnavailable);
  CHECK(ClassifyError("Overloaded", 529) == FailureKind::kProviderUnavailable);
  CHECK(ClassifyError("anything", 403) == FailureKind::kAuthError);
  CHECK(ClassifyError("Could not connect to local model provider", std::nullopt) ==
        FailureKind::kTransportError);
  CHECK(ClassifyError("the tests failed", std::nullopt) == FailureKind::kNone);
  CHECK(ClassifyStatus(418) == FailureKind::kNone);
}

TEST_CASE("retry-after hints are bounded and never throw", "[error_classifier]") {
  CHECK(FindRetryAfter("retry-after: 7") == 7);
  CHECK(FindRetryAfter("retryDelayMs: 2500") == 3);
  CHECK(FindRetryAfter("retrying in 12s") == 12);
  CHECK(FindRetryAfter("nothing here") == std::nullopt);
  CHECK(FindRetryAfter("retry-after: 99999999999999999999") == kMaxRetryAfterS);
  CHECK(FindRetryAfter("retryDelayMs: 99999999999999999999999999") == kMaxRetryAfterS);
  CHECK(FindRetryAfter("retry-after: 604801") == kMaxRetryAfterS);
  // Only the first 4 KiB of a huge message are scanned.
  CHECK(FindRetryAfter(std::string(1 << 20, 'x') + " retry-after: 5") == std::nullopt);
}

TEST_CASE("the unstructured scan reads stderr and non-JSON stdout only", "[error_classifier]") {
  SECTION("JSON events on stdout are never read, whatever they say") {
    ParsedOutput p;
    ClassifyUnstructuredFailure(
        p,
        "{\"type\":\"user\",\"content\":\"HTTP/1.1 401 Unauthorized: connection refused\"}\n"
        "{\"type\":\"assistant\",\"text\":\"the API said 429 Too Many Requests\"}\n"
        "{\"type\":\"tool_result\",\"output\":\"cut 500 Internal Server Err",
        "", 143);
    CHECK(p.failure == FailureKind::kNonZeroExit);
    CHECK(p.rule == "exit-status");
    CHECK(p.evidence == "[exit-status] exit=143 (no output)");
  }
  SECTION("stderr decides first") {
    ParsedOutput p;
    ClassifyUnstructuredFailure(p, "plain line\n",
                                "starting\nError: connect ECONNREFUSED 127.0.0.1:9\n", 1);
    CHECK(p.failure == FailureKind::kTransportError);
    CHECK(p.rule == "stderr");
    CHECK(p.evidence == "[stderr] exit=1 Error: connect ECONNREFUSED 127.0.0.1:9");
  }
  SECTION("then the non-JSON tail of stdout") {
    ParsedOutput p;
    ClassifyUnstructuredFailure(p, "{\"type\":\"x\"}\nError: 429 Too Many Requests, retry-after: 3\n",
                                "", 1);
    CHECK(p.failure == FailureKind::kRateLimited);
    CHECK(p.rule == "stdout-tail");
    CHECK(p.retry_after_s == 3);
  }
  SECTION("nothing classifies: the exit status decides") {
    ParsedOutput p;
    ClassifyUnstructuredFailure(p, "hello", "", 0);
    CHECK(p.failure == FailureKind::kContractViolation);
    CHECK(p.evidence == "[exit-status] exit=0 hello");
  }
  CHECK(UnstructuredStdoutTail("a\n{\"j\":1}\n[1,2]\n\nb\n", 5) ==
        std::vector<std::string_view>{"b", "a"});
}
