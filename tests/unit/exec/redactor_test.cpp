// Unit tests: streaming redaction (exec/redactor).
#include <catch2/catch.hpp>

#include "exec/redactor.h"

using namespace conclave;

namespace {

TEST_CASE("streaming redaction catches secrets split across chunks", "[exec]") {
  std::string secret = "sk-SECRET-value";
  std::string text = "a" + secret + "b" + secret + secret + "c";
  for (size_t chunk = 1; chunk <= text.size(); ++chunk) {
    exec::StreamRedactor r({secret, "other-token"});
    std::string out;
    for (size_t i = 0; i < text.size(); i += chunk) out += r.Feed(text.substr(i, chunk));
    out += r.Finish();
    INFO(chunk);
    CHECK(out == "a[REDACTED]b[REDACTED][REDACTED]c");
  }
  CHECK(exec::RedactAll("no secrets here", {}) == "no secrets here");
}

}  // namespace
