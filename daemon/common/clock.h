// Wall-clock milliseconds since the epoch: what the store records and clients see.
#pragma once

#include <chrono>
#include <cstdint>

namespace conclave {

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace conclave
