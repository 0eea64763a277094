// Fuzz target: the transcript redactor (exec/redactor), a property target. Input: byte 0 =
// number of secrets (1-3), then per secret a length byte and its bytes, then a byte giving
// where the first secret is inserted into the text, then chunk sizes ... and the text:
//   n, (len, bytes)*n, at, c1, c2, c3, text
// Secrets avoid the bytes of "[REDACTED]" (each such byte is flipped) so that a secret in the
// output can only be one that came through unredacted. Properties, for the text with the
// secret inserted: fed whole, split in two at every offset from just before to just after the
// inserted secret, and split into chunks of the three sizes repeated, the output never
// contains a secret and is the same as RedactAll's; RedactAll and Redactor::Apply give what a
// naive scan (every form compared at every byte, longest first) gives.
#include <algorithm>

#include "../support/naive_redact.h"
#include "exec/redactor.h"
#include "fuzz_input.h"

namespace {
using namespace conclave;

bool Leaks(const std::string& out, const std::vector<std::string>& secrets) {
  for (const auto& s : secrets) {
    if (out.find(s) != std::string::npos) return true;
  }
  return false;
}

std::string Chunked(const std::string& text, const exec::StreamRedactor& fresh,
                    const std::vector<size_t>& sizes) {
  exec::StreamRedactor r = fresh;
  std::string out;
  size_t pos = 0;
  for (size_t k = 0; pos < text.size(); ++k) {
    size_t n = std::min(sizes[k % sizes.size()], text.size() - pos);
    out += r.Feed(std::string_view(text).substr(pos, n));
    pos += n;
  }
  return out + r.Finish();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t i = 0;
  auto next = [&]() -> uint8_t { return i < size ? data[i++] : 0; };
  const size_t count = 1 + next() % 3;
  std::vector<std::string> secrets;
  for (size_t k = 0; k < count; ++k) {
    size_t len = 1 + next() % 48;
    std::string s;
    for (size_t b = 0; b < len && i < size; ++b) {
      char c = static_cast<char>(next());
      if (exec::kRedacted.find(c) != std::string_view::npos) c = static_cast<char>(c ^ 0x80);
      s.push_back(c);
    }
    if (!s.empty()) secrets.push_back(s);
  }
  if (secrets.empty()) return 0;
  const size_t at = next();
  std::vector<size_t> sizes = {1 + size_t{next()}, 1 + size_t{next()}, 1 + size_t{next()}};
  std::string text(reinterpret_cast<const char*>(data) + i, size - i);
  const size_t pos = std::min(at * 4, text.size());
  text.insert(pos, secrets[0]);

  const std::string whole = exec::RedactAll(text, secrets);
  if (Leaks(whole, secrets)) fuzz::PropertyFailed("secret survives RedactAll");
  if (whole != conclave::testing::NaiveRedact(text, secrets)) {
    fuzz::PropertyFailed("RedactAll differs from a naive scan");
  }
  if (exec::Redactor(secrets).Apply(text) != whole) fuzz::PropertyFailed("Apply differs");
  // Every stream below starts as a copy of one fresh redactor: building the forms (base64 and
  // URL encodings) once keeps the target fast; a copy holds exactly what a new one would.
  const exec::StreamRedactor fresh(secrets);
  if (Chunked(text, fresh, sizes) != whole) fuzz::PropertyFailed("chunking changes output");
  const size_t last = std::min(text.size(), pos + secrets[0].size() + 1);
  for (size_t cut = pos > 0 ? pos - 1 : 0; cut <= last; ++cut) {
    exec::StreamRedactor r = fresh;
    std::string out = r.Feed(std::string_view(text).substr(0, cut));
    out += r.Feed(std::string_view(text).substr(cut));
    out += r.Finish();
    if (Leaks(out, secrets)) fuzz::PropertyFailed("secret survives a split");
    if (out != whole) fuzz::PropertyFailed("a split changes the output");
  }
  return 0;
}
