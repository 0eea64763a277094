#include "domain/review_record.h"

#include <array>

namespace conclave::domain {
namespace {
constexpr std::array<std::string_view, 2> kReviewNames = {"running", "done"};
constexpr std::array<std::string_view, 4> kRoundNames = {"running", "done", "failed", "malformed"};
}  // namespace

std::string_view ReviewStatusName(ReviewStatus s) { return kReviewNames[static_cast<size_t>(s)]; }

std::optional<ReviewStatus> ParseReviewStatus(std::string_view name) {
  for (size_t i = 0; i < kReviewNames.size(); ++i) {
    if (kReviewNames[i] == name) return static_cast<ReviewStatus>(i);
  }
  return std::nullopt;
}

std::string_view RoundStateName(RoundState s) { return kRoundNames[static_cast<size_t>(s)]; }

std::optional<RoundState> ParseRoundState(std::string_view name) {
  for (size_t i = 0; i < kRoundNames.size(); ++i) {
    if (kRoundNames[i] == name) return static_cast<RoundState>(i);
  }
  return std::nullopt;
}

}  // namespace conclave::domain
