// Tests for daemon/exec/error_classifier.cpp: wording and status classification, bounded
// retry-after hints, and the unstructured fallback that never reads CLI events.
#include <catch2/catch.hpp>

#include <string>

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

// The status and retry-hint scanners replaced std::regex (found by fuzz_retry_after): each
// case below is an input class the fuzzer turned up, kept as a regression test.
TEST_CASE("FindRetryAfter: a hint too large saturates at the cap instead of throwing",
          "[error_classifier][fuzz]") {
  CHECK(FindRetryAfter("retry-after: 99999999999") == kMaxRetryAfterS);
  CHECK(FindRetryAfter("retry after 99999999999999999999999999 s") == kMaxRetryAfterS);
  CHECK(FindRetryAfter("retryDelayMs: 99999999999999999999") == kMaxRetryAfterS);
  CHECK(FindRetryAfter("retrying in 4294967296s") == kMaxRetryAfterS);
  CHECK(FindRetryAfter("retry-after: 2147483647") == kMaxRetryAfterS);
  CHECK(FindRetryAfter("retryDelayMs: 2147483647000") == kMaxRetryAfterS);
  CHECK(FindRetryAfter("retryDelayMs: 604799001") == kMaxRetryAfterS);  // rounded up, at the cap
  CHECK(FindRetryAfter("retryDelayMs: 604798001") == kMaxRetryAfterS - 1);
  CHECK(FindRetryAfter("retry-after: 0007") == 7);
}

// std::regex recursed once per character of a `\s*` run: a worker printing a keyword and a
// few MiB of blanks overflowed the daemon's stack, and a few MiB of text took minutes on the
// loop thread. The scanners are linear; they read the first 4 KiB (a hint further in is not
// read), and megabytes of input cost no more than that.
TEST_CASE("Status and retry hints after runs of blanks: no recursion, found in the window",
          "[error_classifier][fuzz]") {
  const std::string blanks(4000, ' ');
  CHECK(FindHttpStatus("API Error: " + blanks + "500") == 500);
  CHECK(FindHttpStatus("429" + blanks + "Too Many Requests") == 429);
  CHECK(FindHttpStatus("status" + blanks + "503") == 503);
  CHECK(FindRetryAfter("retry-after:" + blanks + "7") == 7);
  CHECK(FindRetryAfter("retrying in" + std::string(2000, ' ') + "9" + std::string(2000, ' ') +
                       "s") == 9);
  const std::string mib(4 << 20, ' ');
  CHECK(FindHttpStatus("API Error: " + mib + "500") == std::nullopt);
  CHECK(FindRetryAfter("retry-after:" + mib + "7") == std::nullopt);
  CHECK(ClassifyError("rate limit" + mib, std::nullopt) == FailureKind::kRateLimited);
}

TEST_CASE("FindHttpStatus: each form, its word boundaries and the first match per form",
          "[error_classifier][fuzz]") {
  CHECK(FindHttpStatus("API Error: Request rejected (429) · Rate limit") == 429);
  CHECK(FindHttpStatus("api error 503") == 503);
  CHECK(FindHttpStatus("API Error: 5000") == std::nullopt);  // four digits: not a status
  CHECK(FindHttpStatus("last status:401") == 401);
  CHECK(FindHttpStatus("unexpected status 502 Bad Gateway") == 502);
  CHECK(FindHttpStatus(R"({"statusCode":500})") == 500);
  CHECK(FindHttpStatus(R"("code" = 429)") == 429);
  CHECK(FindHttpStatus("Status 503") == 503);
  CHECK(FindHttpStatus("xstatus 503") == std::nullopt);  // no word boundary before status
  CHECK(FindHttpStatus("got 403 forbidden") == 403);
  CHECK(FindHttpStatus("got 1403 Forbidden") == std::nullopt);
  CHECK(FindHttpStatus("502 Bad Gatewayish") == std::nullopt);
  CHECK(FindHttpStatus("failed (500)") == 500);
  CHECK(FindHttpStatus("status 200, then status 500") == std::nullopt);  // first match decides
  CHECK(FindHttpStatus("status 200 (503)") == 503);                      // the next form is tried
}

TEST_CASE("FindRetryAfter: each form", "[error_classifier][fuzz]") {
  CHECK(FindRetryAfter(R"("retry-after": "12")") == 12);
  CHECK(FindRetryAfter("Retry_After=3s") == 3);
  CHECK(FindRetryAfter("retry_delay_ms = 1500") == 2);
  CHECK(FindRetryAfter("retryDelayMs 1500") == std::nullopt);  // the ms form needs : or =
  CHECK(FindRetryAfter("Retrying in 5 s") == 5);
  CHECK(FindRetryAfter("retry in 5s") == 5);
  CHECK(FindRetryAfter("retry in 5 minutes") == std::nullopt);  // the number must end in s
  CHECK(FindRetryAfter("retry after retry-after: 4") == 4);
}
