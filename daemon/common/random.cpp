#include "common/random.h"

#include <pthread.h>
#include <sys/random.h>

#include <algorithm>
#include <cstring>
#include <random>

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

// Bytes from the kernel's CSPRNG, fetched 512 at a time: a Send's thread id is 6 of them, and a
// getrandom call for each was a system call on every Send. Each byte is handed out once. The
// pool is per thread (no lock), and a forked child empties the forking thread's pool before it
// can draw from it, so a child never repeats what its parent draws next.
class Pool {
 public:
  void Take(unsigned char* out, size_t n) {
    if (n > sizeof bytes_) return Fill(out, n);
    if (left_ < n) {
      Fill(bytes_, sizeof bytes_);
      left_ = sizeof bytes_;
    }
    unsigned char* from = bytes_ + sizeof bytes_ - left_;
    std::memcpy(out, from, n);
    std::memset(from, 0, n);
    left_ -= n;
  }
  void Empty() {
    std::memset(bytes_, 0, sizeof bytes_);
    left_ = 0;
  }

 private:
  unsigned char bytes_[512];
  size_t left_ = 0;
};

thread_local Pool t_pool;

void Take(unsigned char* out, size_t n) {
  static const bool registered = [] {
    pthread_atfork(nullptr, nullptr, [] { t_pool.Empty(); });
    return true;
  }();
  (void)registered;
  t_pool.Take(out, n);
}

}  // namespace

uint64_t RandomU64() {
  unsigned char buf[8];
  Take(buf, sizeof buf);
  uint64_t v = 0;
  for (unsigned char c : buf) v = (v << 8) | c;
  return v;
}

std::string RandomHex(size_t n_bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string out(n_bytes * 2, '\0');
  unsigned char chunk[64];
  for (size_t done = 0; done < n_bytes;) {
    size_t n = std::min(sizeof chunk, n_bytes - done);
    Take(chunk, n);
    for (size_t i = 0; i < n; ++i) {
      out[2 * (done + i)] = kHex[chunk[i] >> 4];
      out[2 * (done + i) + 1] = kHex[chunk[i] & 15];
    }
    done += n;
  }
  std::memset(chunk, 0, sizeof chunk);
  return out;
}

}  // namespace conclave
