// Review and ReviewRound: the stored shape of a review job and of each reviewer round
// (DESIGN §1 "Reviews"). Findings, plan and provenance are JSON text. Plain records. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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
};

}  // namespace conclave::domain
