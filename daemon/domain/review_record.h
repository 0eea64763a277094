// Review, ReviewRound and Signoff: the stored shape of a review job, of each reviewer round
// and of a sign-off on a review's decision gate (DESIGN §1 "Reviews"). Findings, plan and
// provenance are JSON text. Plain records. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "domain/caller_identity.h"

namespace conclave::domain {

// A review is running until its verdict is in, then done (a re-gate runs it again).
enum class ReviewStatus { kRunning, kDone };
// A round runs, then is done (findings parsed), failed (the reviewer's dispatch failed) or
// malformed (its answer had no findings twice).
enum class RoundState { kRunning, kDone, kFailed, kMalformed };

std::string_view ReviewStatusName(ReviewStatus s);
std::optional<ReviewStatus> ParseReviewStatus(std::string_view name);
std::string_view RoundStateName(RoundState s);
std::optional<RoundState> ParseRoundState(std::string_view name);

struct Review {
  int64_t id = 0;
  std::string mode, writer_family, artifact_kind, artifact, artifact_sha;
  int revision = 1;
  ReviewStatus status = ReviewStatus::kRunning;
  std::string verdict, termination, reason, blocked_by;
  int cap = 2;
  std::string session, coordinator, idem_key;
  std::string plan = "{}";
  double budget_usd = 0;
  int64_t gate_id = 0;
  std::string findings = "[]";
  int64_t created_ms = 0, updated_ms = 0;
  int max_fix_rounds = 2;  // re-gates with a new artifact allowed; past it a re-gate escalates
  int fix_rounds = 0;      // re-gates with a new artifact so far
  std::string repo, repo_commit;  // the reviewed repository and commit ("" = none)
  bool measure = false;  // Phase 0: same-source and foreign reviewer run independently
  std::string carried = "[]";  // open foreign findings carried into this revision
};

struct ReviewRound {
  int64_t id = 0;
  int64_t review_id = 0;
  int revision = 1;
  int round = 0;
  std::string role, profile, family;
  int64_t task_id = 0;
  RoundState state = RoundState::kRunning;
  std::string findings = "[]";
  int malformed = 0;
  std::string error;
  double cost_usd = 0;
  int64_t created_ms = 0, finished_ms = 0;
  std::string model;  // the model name the profile resolved to at dispatch ("" = unknown)
};

// A decision on a review's stalemate or gate-absent decision gate, with who made it. It is a
// human sign-off only when the caller was at a terminal.
struct Signoff {
  int64_t id = 0, review_id = 0, gate_id = 0;
  int revision = 0;
  CallerIdentity caller;
  bool human = false;
  std::string decision, reason;
  std::string verdict_before, verdict_after;
  int64_t created_ms = 0;
};

}  // namespace conclave::domain
