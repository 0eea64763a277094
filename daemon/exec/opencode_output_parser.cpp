// Contract: the "opencode-jsonl" parser (see output_parser.h) for `opencode run --format
// json`. There is no final result object: the answer is the text of the last step that
// produced text; usage and cost are summed over "step_finish" events; a provider error is
// one {"type":"error","error":{"name":"APIError","data":{"message","statusCode",
// "isRetryable","responseHeaders":{...,"retry-after"}}}} event and exit 1
// (tests/e2e/fixtures/opencode/jsonl). opencode prints a "text" event only once a text part
// is complete: nothing appears while the model streams one answer.
#include "exec/output_parser.h"
#include "exec/parser_support.h"

namespace conclave::exec {
namespace {
using domain::FailureKind;
using nlohmann::json;
using namespace parser_detail;
}  // namespace

ParsedOutput ParseOpencodeOutput(std::string_view out, std::string_view err, int exit_code) {
  ParsedOutput p;
  std::string step_text;
  std::string last_text;
  bool finished = false;
  double cost = 0;
  std::optional<json> error;
  for (const auto& e : JsonLines(out)) {
    const std::string type = JsonStr(e, "type");
    const json& part = JsonField(e, "part");
    if (type == "step_start") {
      step_text.clear();
    } else if (type == "text") {
      if (!step_text.empty()) step_text += "\n";
      step_text += JsonStr(part, "text");
      last_text = step_text;
    } else if (type == "step_finish") {
      finished = true;
      const json& tokens = JsonField(part, "tokens");
      p.usage.input_tokens = SaturatingAdd(p.usage.input_tokens, JsonInt(tokens, "input"));
      p.usage.output_tokens = SaturatingAdd(
          p.usage.output_tokens, SaturatingAdd(JsonInt(tokens, "output"), JsonInt(tokens, "reasoning")));
      p.usage.cache_read_tokens =
          SaturatingAdd(p.usage.cache_read_tokens, JsonInt(JsonField(tokens, "cache"), "read"));
      if (auto c = JsonNonNegative(part, "cost"); c && *c < 1e9) cost += *c;
    } else if (type == "error") {
      error = JsonField(e, "error");
    }
  }
  p.result_text = last_text;
  if (cost > 0) p.reported_cost_usd = cost;

  if (error) {
    const json& data = JsonField(*error, "data");
    const std::string name = JsonStr(*error, "name");
    const std::string msg = JsonStr(data, "message");
    const std::optional<int> status = JsonHttpStatus(data, "statusCode");
    FailureKind k = status ? ClassifyStatus(*status) : FailureKind::kNone;
    if (k == FailureKind::kNone && name == "ProviderAuthError") k = FailureKind::kAuthError;
    if (k == FailureKind::kNone) k = ClassifyError(name + ": " + msg, std::nullopt);
    SetStructuredFailure(p, k == FailureKind::kNone ? FailureKind::kWorkerFailed : k,
                         "error " + name +
                             (status ? " statusCode=" + std::to_string(*status) : std::string()) +
                             " " + Clip(msg, 200));
    if (k == FailureKind::kRateLimited) {
      const json& ra = JsonField(JsonField(data, "responseHeaders"), "retry-after");
      if (ra.is_string()) p.retry_after_s = FindRetryAfter("retry-after: " + ra.get<std::string>());
      if (!p.retry_after_s) p.retry_after_s = FindRetryAfter(msg);
    }
    return p;
  }
  if (!finished) {
    p.malformed = true;
    ClassifyUnstructuredFailure(p, out, err, exit_code);
    return p;
  }
  if (exit_code != 0) {
    p.failure = FailureKind::kNonZeroExit;
    p.rule = "exit-status";
    p.evidence = "[exit-status] exit=" + std::to_string(exit_code) + " " + Clip(LastNonEmptyLine(err));
  }
  return p;
}

}  // namespace conclave::exec
