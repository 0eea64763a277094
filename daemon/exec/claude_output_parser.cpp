// Contract: the "claude-json" parser (see output_parser.h) for `claude -p --output-format
// json` (one result object) and `--output-format stream-json --verbose` (JSONL whose last
// object is the same result). Also serves DeepSeek / GLM / Kimi, which run the claude CLI.
//
// Shapes (tests/e2e/fixtures/claude): success -> {"type":"result","subtype":"success",
// "is_error":false,"result":...,"total_cost_usd":...,"usage":{...},"structured_output":..};
// an API error -> exit 1 with is_error:true, "api_error_status":500|429|401 (null for a
// connection error) and the message in "result"; --max-budget-usd exceeded -> exit 1 with
// subtype "error_max_budget_usd" and "errors":[...].
#include "exec/output_parser.h"

namespace conclave::exec {
namespace {

using domain::FailureKind;
using nlohmann::json;
using namespace parser_detail;

std::optional<json> FindResult(std::string_view out) {
  std::optional<json> last;
  for (auto& j : JsonLines(out)) {
    if (JsonStr(j, "type") == "result") last = std::move(j);
  }
  if (last) return last;
  // --output-format json may be pretty-printed on some versions: try the whole text.
  auto whole = ParseJson(out);
  if (!whole.is_discarded() && whole.is_object() && JsonStr(whole, "type") == "result") {
    return whole;
  }
  return std::nullopt;
}

std::string JoinErrors(const json& r) {
  std::string s;
  if (auto it = r.find("errors"); it != r.end() && it->is_array()) {
    for (const auto& e : *it) {
      if (!s.empty()) s += "; ";
      s += e.is_string() ? e.get<std::string>() : e.dump();
    }
  }
  return s;
}

}  // namespace

ParsedOutput ParseClaudeOutput(std::string_view out, std::string_view err, int exit_code) {
  ParsedOutput p;
  auto r = FindResult(out);
  if (!r) {
    p.malformed = true;
    p.result_text = std::string(out);
    ClassifyUnstructuredFailure(p, out, err, exit_code);
    return p;
  }
  if (auto it = r->find("result"); it != r->end() && it->is_string()) p.result_text = *it;
  if (auto it = r->find("total_cost_usd"); it != r->end() && it->is_number()) {
    p.reported_cost_usd = it->get<double>();
  }
  if (auto it = r->find("usage"); it != r->end() && it->is_object()) {
    p.usage.input_tokens =
        JsonInt(*it, "input_tokens") + JsonInt(*it, "cache_creation_input_tokens");
    p.usage.output_tokens = JsonInt(*it, "output_tokens");
    p.usage.cache_read_tokens = JsonInt(*it, "cache_read_input_tokens");
  }
  if (auto it = r->find("structured_output"); it != r->end() && !it->is_null()) {
    p.structured_output = *it;
  }

  const std::string subtype = JsonStr(*r, "subtype");
  const bool is_error = JsonBool(*r, "is_error", false);
  std::optional<int> status;
  if (auto it = r->find("api_error_status"); it != r->end() && it->is_number_integer()) {
    status = it->get<int>();
  }

  if (subtype == "error_max_budget_usd") {
    p.failure = FailureKind::kBudgetExceeded;
    p.evidence = "subtype=error_max_budget_usd " + Clip(JoinErrors(*r));
    return p;
  }
  if (!is_error && subtype == "success") {
    if (exit_code != 0) {
      p.failure = FailureKind::kNonZeroExit;
      p.evidence = "exit=" + std::to_string(exit_code) + " with is_error=false";
    }
    return p;
  }
  // An error result: API errors carry api_error_status; other subtypes (error_max_turns,
  // error_during_execution ...) are the worker failing.
  std::string message = p.result_text.empty() ? JoinErrors(*r) : p.result_text;
  FailureKind k = ClassifyError(message, status);
  if (k == FailureKind::kNone) {
    k = FailureKind::kWorkerFailed;
  }
  p.failure = k;
  p.evidence = "is_error=" + std::string(is_error ? "true" : "false") + " subtype=" + subtype +
               (status ? " api_error_status=" + std::to_string(*status) : std::string()) +
               " result=" + Clip(message, 200);
  if (k == FailureKind::kRateLimited)
    p.retry_after_s = FindRetryAfter(message + "\n" + std::string(err));
  return p;
}

}  // namespace conclave::exec
