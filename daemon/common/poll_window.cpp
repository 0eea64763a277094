#include "common/poll_window.h"

#include <algorithm>

namespace conclave {

void PollWindow::Idled(Nanos idle, Ended how) {
  if (max_.count() == 0) return;
  if (how == Ended::kPolling) {
    credit_ = std::min(kMaxCredit, credit_ + 1);
  } else if (credit_ > 0) {  // polled, and nothing came
    credit_ = std::max(kMinCredit, credit_ - kMissCost);
  } else if (how == Ended::kCall && idle <= reach()) {
    credit_ = std::min(kMaxCredit, credit_ + 1);
  }
}

}  // namespace conclave
