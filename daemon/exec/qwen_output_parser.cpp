// Contract: the "qwen-json" parser (see output_parser.h) for `qwen --output-format json`
// (one JSON array: system init, assistant/user messages, then a "result" object). Also
// accepts `--output-format stream-json` (the same objects, one per line).
//
// qwen reports provider errors with exit 0, "is_error":false and a result text starting
// with "[API Error: <status> <message>]" (tests/e2e/fixtures/qwen/http*.txt): those are
// failures, classified from the status and wording. A connection failure reads
// "[API Error: Connection error. (cause: fetch failed)]".
#include "exec/output_parser.h"

namespace conclave::exec {
namespace {
using domain::FailureKind;
using nlohmann::json;
using namespace parser_detail;

std::optional<json> FindResult(std::string_view out) {
  std::optional<json> last;
  auto whole = ParseJson(out);
  if (!whole.is_discarded() && whole.is_array()) {
    for (auto& e : whole) {
      if (e.is_object() && JsonStr(e, "type") == "result") last = e;
    }
    return last;
  }
  if (!whole.is_discarded() && whole.is_object() && JsonStr(whole, "type") == "result") {
    return whole;
  }
  for (auto& e : JsonLines(out)) {
    if (JsonStr(e, "type") == "result") last = std::move(e);
  }
  return last;
}
}  // namespace

ParsedOutput ParseQwenOutput(std::string_view out, std::string_view err, int exit_code) {
  ParsedOutput p;
  auto r = FindResult(out);
  if (!r) {
    p.malformed = true;
    p.result_text = std::string(out);
    ClassifyUnstructuredFailure(p, out, err, exit_code);
    return p;
  }
  if (auto it = r->find("result"); it != r->end() && it->is_string()) p.result_text = *it;
  if (auto it = r->find("usage"); it != r->end() && it->is_object()) {
    int64_t input = JsonInt(*it, "input_tokens");
    int64_t cached = JsonInt(*it, "cache_read_input_tokens");
    p.usage.input_tokens = input > cached ? input - cached : 0;
    p.usage.cache_read_tokens = cached;
    p.usage.output_tokens = JsonInt(*it, "output_tokens");
  }
  if (auto it = r->find("total_cost_usd"); it != r->end() && it->is_number()) {
    p.reported_cost_usd = it->get<double>();
  }
  const bool is_error = JsonBool(*r, "is_error", false);
  const bool api_error = p.result_text.rfind("[API Error", 0) == 0;
  if (is_error || api_error) {
    FailureKind k = ClassifyError(p.result_text, std::nullopt);
    p.failure = k == FailureKind::kNone ? FailureKind::kWorkerFailed : k;
    p.evidence = std::string("is_error=") + (is_error ? "true" : "false") + " result=" +
                 Clip(LastNonEmptyLine(p.result_text).empty()
                          ? p.result_text
                          : p.result_text.substr(0, p.result_text.find('\n')),
                      200);
    if (k == FailureKind::kRateLimited) p.retry_after_s = FindRetryAfter(p.result_text);
    return p;
  }
  if (exit_code != 0) {
    p.failure = FailureKind::kNonZeroExit;
    p.evidence = "exit=" + std::to_string(exit_code) + " " + Clip(LastNonEmptyLine(err));
  }
  return p;
}

}  // namespace conclave::exec
