#include "common/random.h"

#include <sys/random.h>

#include <random>
#include <vector>

namespace conclave {

namespace {
void Fill(unsigned char* buf, size_t n_bytes) {
  size_t got = 0;
  while (got < n_bytes) {
    ssize_t r = getrandom(buf + got, n_bytes - got, 0);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  if (got < n_bytes) {  // getrandom cannot fail on Linux ≥3.17 after boot; be safe anyway
    std::random_device rd;
    for (size_t i = got; i < n_bytes; ++i) buf[i] = static_cast<unsigned char>(rd());
  }
}
}  // namespace

uint64_t RandomU64() {
  unsigned char buf[8];
  Fill(buf, sizeof buf);
  uint64_t v = 0;
  for (unsigned char c : buf) v = (v << 8) | c;
  return v;
}

std::string RandomHex(size_t n_bytes) {
  std::vector<unsigned char> buf(n_bytes);
  Fill(buf.data(), n_bytes);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(n_bytes * 2);
  for (unsigned char c : buf) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

}  // namespace conclave
