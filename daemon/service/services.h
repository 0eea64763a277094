// Services: the composition of every use-case service over one Core. The api layer holds a
// reference and posts each RPC onto the loop that owns it.
#pragma once

#include <memory>

#include "service/core.h"
#include "service/messaging_service.h"
#include "service/review_service.h"
#include "service/task_service.h"
#include "service/transcript_follower.h"

namespace conclave::service {

struct Services {
  explicit Services(Core& c)
      : core(c), messaging(c), transcripts(c), tasks(c, messaging), reviews(c, messaging, tasks) {
    core.transcripts = &transcripts;
  }
  Core& core;
  MessagingService messaging;
  TranscriptFollower transcripts;
  TaskService tasks;
  ReviewService reviews;

  // Counts for GetStatus.
  std::map<std::string, int64_t> Counts();

  struct SpendLine {
    std::string cap;
    double spent = 0, cap_usd = 0;
  };
  // Spend against every configured cap (today's family caps, sessions), for GetStatus.
  std::vector<SpendLine> SpendLines();
};

}  // namespace conclave::service
