// The brief of one reviewer round (DESIGN §1 "Reviews", seed 000): the reviewer's role in the
// debate (primary, challenger, parallel line), the findings of earlier rounds, the artifact,
// and the findings-JSON answer format. Pure text assembly.
#pragma once

#include <string>
#include <vector>

#include "domain/review_record.h"

namespace conclave::domain {

std::string BuildRoundBrief(const Review& r, int round, const std::string& role,
                            const std::vector<ReviewRound>& prior);

}  // namespace conclave::domain
