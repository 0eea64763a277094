// Random identifiers (thread ids, dispatch tokens) and jitter, from the kernel's CSPRNG (a
// per-thread pool of its bytes, each handed out once: random.cpp). Any thread.
#pragma once

#include <cstdint>
#include <string>

namespace conclave {

// 64 random bits (all of them: backoff jitter reads the top 53).
uint64_t RandomU64();

// n random bytes as 2n lower-case hex characters.
std::string RandomHex(size_t n_bytes);

}  // namespace conclave
