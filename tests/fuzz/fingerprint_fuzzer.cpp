// Fuzz target: the failure-text normaliser and fingerprint (domain/fingerprint). Input:
// failure text, NUL, hypothesis. Properties: the fingerprint is 16 lower-case hex digits
// and deterministic; the normal form has no ASCII upper case, no digit, no ESC, no whitespace but
// single spaces and no leading, trailing or doubled space.
#include "domain/fingerprint.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace conclave;
  auto f = fuzz::Fields(data, size, 2);
  std::string norm = domain::NormalizeFailureText(f[0]);
  for (size_t i = 0; i < norm.size(); ++i) {
    char c = norm[i];
    if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '\x1b' || c == '\t' ||
        c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      fuzz::PropertyFailed("upper case, digit, ESC or non-space whitespace in the normal form");
    }
    if (c == ' ' && (i == 0 || i + 1 == norm.size() || norm[i + 1] == ' ')) {
      fuzz::PropertyFailed("untrimmed or doubled space");
    }
  }
  std::string fp = domain::FailureFingerprint(f[0], f[1]);
  if (fp.size() != 16 || fp.find_first_not_of("0123456789abcdef") != std::string::npos) {
    fuzz::PropertyFailed("fingerprint is not 16 hex digits");
  }
  if (fp != domain::FailureFingerprint(f[0], f[1])) fuzz::PropertyFailed("not deterministic");
  return 0;
}
