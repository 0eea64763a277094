// Contract: see review_policy.h.
#include "domain/review_policy.h"

#include "domain/family.h"

#include <array>

namespace conclave::domain {
namespace {

constexpr std::array<std::string_view, 5> kModeNames = {"mechanical", "simple", "ordinary",
                                                        "strong", "debate"};


std::string Describe(std::string_view role, const ReviewerCandidate& c) {
  return std::string(role) + " " + c.profile + " (family " + c.family + ")";
}

ReviewPlan Refuse(std::string error) {
  ReviewPlan plan;
  plan.error = std::move(error);
  return plan;
}

// "" when `c` may review the writer's artifact, else the reason.
std::string CheckCrossFamily(std::string_view role, const ReviewerCandidate& c,
                             std::string_view writer_family) {
  if (c.family.empty()) return std::string(role) + " " + c.profile + " has no family";
  if (SameFamily(c.family, writer_family)) {
    return Describe(role, c) + " shares the writer's family " + std::string(writer_family);
  }
  return "";
}

std::optional<ReviewerCandidate> FindProfile(const std::vector<ReviewerCandidate>& available,
                                             std::string_view profile) {
  for (const ReviewerCandidate& c : available) {
    if (c.profile == profile) return c;
  }
  return std::nullopt;
}

// First candidate (default profile first, then config order) whose family is non-empty and
// differs from every family in `excluded`.
std::optional<ReviewerCandidate> FirstOutside(const ReviewPlanRequest& request,
                                              const std::vector<std::string>& excluded,
                                              bool default_first) {
  std::vector<ReviewerCandidate> order;
  if (default_first) {
    if (auto d = FindProfile(request.available, request.default_profile)) order.push_back(*d);
  }
  order.insert(order.end(), request.available.begin(), request.available.end());
  for (const ReviewerCandidate& c : order) {
    bool clash = c.family.empty();
    for (const std::string& family : excluded) clash = clash || SameFamily(c.family, family);
    if (!clash) return c;
  }
  return std::nullopt;
}

std::vector<ReviewerCandidate> Explicit(const ReviewPlanRequest& request) {
  std::vector<ReviewerCandidate> out;
  if (request.primary) out.push_back(*request.primary);
  out.insert(out.end(), request.challengers.begin(), request.challengers.end());
  return out;
}

ReviewPlan PlanSingleLine(const ReviewPlanRequest& request, ReviewPlan plan) {
  const std::vector<ReviewerCandidate> chosen = Explicit(request);
  const std::string mode(ReviewModeName(request.mode));
  if (chosen.size() > 1) return Refuse(mode + " review takes exactly one reviewer");
  if (chosen.size() == 1) {
    if (auto e = CheckCrossFamily("reviewer", chosen[0], request.writer_family); !e.empty()) {
      return Refuse(e);
    }
    plan.lines = chosen;
    return plan;
  }
  std::optional<ReviewerCandidate> pick;
  if (request.mode == ReviewMode::kOrdinary && !request.default_profile.empty()) {
    pick = FindProfile(request.available, request.default_profile);
    if (!pick) return Refuse("default profile " + request.default_profile + " is not available");
    if (!CheckCrossFamily("reviewer", *pick, request.writer_family).empty()) pick.reset();
  }
  // The configured default reviewer first (when it is cross-family), then config order.
  if (!pick) pick = FirstOutside(request, {request.writer_family}, true);
  if (!pick) {
    return Refuse(mode + " review needs a profile outside the writer's family " +
                  request.writer_family + "; none is available");
  }
  plan.lines = {*pick};
  return plan;
}

ReviewPlan PlanStrong(const ReviewPlanRequest& request, ReviewPlan plan) {
  std::vector<ReviewerCandidate> chosen = Explicit(request);
  if (chosen.size() > 2) return Refuse("strong review takes exactly two reviewers");
  std::vector<std::string> families = {request.writer_family};
  for (const ReviewerCandidate& c : chosen) {
    if (auto e = CheckCrossFamily("reviewer", c, request.writer_family); !e.empty()) {
      return Refuse(e);
    }
    families.push_back(c.family);
  }
  if (chosen.size() == 2 && SameFamily(chosen[0].family, chosen[1].family)) {
    return Refuse("strong reviewers " + chosen[0].profile + " and " + chosen[1].profile +
                  " share the family " + chosen[0].family);
  }
  while (chosen.size() < 2) {
    auto pick = FirstOutside(request, families, true);
    if (!pick) {
      return Refuse(
          "strong review needs two reviewers of distinct families other than the "
          "writer's family " +
          request.writer_family + "; not enough are available");
    }
    families.push_back(pick->family);
    chosen.push_back(*pick);
  }
  plan.lines = chosen;
  return plan;
}

ReviewPlan PlanDebate(const ReviewPlanRequest& request, ReviewPlan plan) {
  if (request.primary) {
    plan.primary = request.primary;
  } else {
    plan.primary = FindProfile(request.available, request.default_profile);
    if (!plan.primary) {
      return Refuse("debate needs a primary; default profile '" + request.default_profile +
                    "' is not available");
    }
  }
  if (plan.primary->family.empty())
    return Refuse("primary " + plan.primary->profile + " has no family");
  for (const ReviewerCandidate& c : request.challengers) {
    if (auto e = CheckCrossFamily("challenger", c, request.writer_family); !e.empty()) {
      return Refuse(e);
    }
    if (SameFamily(c.family, plan.primary->family)) {
      return Refuse(Describe("challenger", c) + " shares the primary's family " +
                    plan.primary->family);
    }
  }
  plan.challengers = request.challengers;
  if (plan.challengers.empty() && request.cap > 0) {
    auto pick = FirstOutside(request, {request.writer_family, plan.primary->family}, false);
    if (!pick) {
      return Refuse("debate needs a challenger outside the writer's family " +
                    request.writer_family + " and the primary's family " + plan.primary->family +
                    "; none is available");
    }
    plan.challengers = {*pick};
  }
  return plan;
}

}  // namespace

std::string_view ReviewModeName(ReviewMode mode) { return kModeNames[static_cast<size_t>(mode)]; }

std::optional<ReviewMode> ParseReviewMode(std::string_view name) {
  for (size_t i = 0; i < kModeNames.size(); ++i) {
    if (SameFamily(name, kModeNames[i])) return static_cast<ReviewMode>(i);
  }
  return std::nullopt;
}

ReviewPlan PlanReview(const ReviewPlanRequest& request) {
  if (request.cap < 0) return Refuse("cap must be >= 0, got " + std::to_string(request.cap));
  ReviewPlan plan;
  plan.ok = true;
  plan.cap = request.cap;
  if (request.mode == ReviewMode::kMechanical) {
    plan.skip_reason = "mechanical mode: no reviewer is dispatched (lifecycle gates still apply)";
    return plan;
  }
  if (request.writer_family.empty()) return Refuse("the writer's family is required");
  switch (request.mode) {
    case ReviewMode::kMechanical:
      return plan;
    case ReviewMode::kSimple:
    case ReviewMode::kOrdinary:
      return PlanSingleLine(request, std::move(plan));
    case ReviewMode::kStrong:
      return PlanStrong(request, std::move(plan));
    case ReviewMode::kDebate:
      return PlanDebate(request, std::move(plan));
  }
  return Refuse("unknown review mode");
}

size_t ChallengerIndexForRound(int round, size_t challenger_count) {
  if (challenger_count == 0 || round < 1) return 0;
  return static_cast<size_t>((round - 1) / 2) % challenger_count;
}

}  // namespace conclave::domain
