#include "common/poll_window.h"

#include <algorithm>

namespace conclave {

void PollWindow::Idled(Nanos idle, bool caught) {
  if (max_.count() == 0) return;
  const bool polled = credit_ > 0;
  if (caught) {
    credit_ = std::min(kMaxCredit, credit_ + 1);
    return;
  }
  if (polled) {
    credit_ = std::max(-kMaxCredit, credit_ - kMissCost);
  } else if (idle <= reach()) {
    credit_ = std::min(kMaxCredit, credit_ + 1);
  }
}

}  // namespace conclave
