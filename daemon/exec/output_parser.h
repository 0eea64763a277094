// Output parsers: turn a model CLI's stdout/stderr/exit code into the final answer text, a
// failure classification with the evidence that decided it, cost and usage.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "domain/failure_kind.h"

namespace conclave::exec {

struct TokenUsage {
  int64_t input_tokens = 0, output_tokens = 0, cache_read_tokens = 0;
};

struct ParsedOutput {
  std::string result_text;
  domain::FailureKind failure = domain::FailureKind::kNone;
  std::string evidence;
  std::optional<double> reported_cost_usd;
  TokenUsage usage;
  std::optional<nlohmann::json> structured_output;
  std::optional<int> retry_after_s;
  bool malformed = false;
};

bool IsKnownParser(std::string_view name);
ParsedOutput ParseCliOutput(std::string_view parser, std::string_view stdout_text,
                            std::string_view stderr_tail, int exit_code);

}  // namespace conclave::exec
