#include "common/recent_callers.h"

#include <functional>

namespace conclave {

void RecentCallers::Heard(std::string_view peer) {
  ring_[next_] = std::hash<std::string_view>{}(peer);
  next_ = (next_ + 1) % kSpan;
  if (filled_ < kSpan) ++filled_;
}

int RecentCallers::Distinct() const {
  int distinct = 0;
  for (int i = 0; i < filled_; ++i) {
    bool seen = false;
    for (int j = 0; j < i && !seen; ++j) seen = ring_[j] == ring_[i];
    distinct += !seen;
  }
  return distinct;
}

}  // namespace conclave
