// Contract: the "copilot-jsonl" parser (see output_parser.h) for `copilot -p/stdin
// --output-format json --stream on` (GitHub Copilot CLI), run by profiles/copilot.json, which
// appends the CLI's --usage-output-file (a pretty-printed JSON object) to stdout after the
// CLI exits.
//
// Shapes (tests/e2e/fixtures/copilot/jsonl): JSONL events {"type":...,"data":{...}}:
// session.*, user.message, assistant.turn_start, assistant.message_delta {deltaContent}
// (one per streamed chunk), assistant.message {content, toolRequests}, tool.execution_* (the
// tool's output), model.call_failure {statusCode, failureKind: api|transport},
// assistant.turn_retry, model.call_final_result {result: success|http_4xx|http_5xx|
// transport_error}, session.error {errorType: query|rate_limit|authentication|..., message,
// statusCode}, and last {"type":"result","exitCode":N,"usage":{premiumRequests,...}} — no
// token counts. Tokens come from the appended usage object: modelMetrics.<model>.usage
// {inputTokens (incl. cached), outputTokens, cacheReadTokens}. No USD cost is printed.
#include "exec/output_parser.h"
#include "exec/parser_support.h"

namespace conclave::exec {
namespace {
using domain::FailureKind;
using nlohmann::json;
using namespace parser_detail;

FailureKind FromErrorType(const std::string& t) {
  if (t == "authentication" || t == "authorization") return FailureKind::kAuthError;
  if (t == "rate_limit" || t == "quota") return FailureKind::kRateLimited;
  return FailureKind::kNone;
}

FailureKind FromFinalResult(const std::string& r) {
  if (r == "transport_error") return FailureKind::kTransportError;
  if (r == "http_5xx") return FailureKind::kProviderUnavailable;
  if (r == "rate_limited" || r == "http_429") return FailureKind::kRateLimited;
  return FailureKind::kNone;
}

void ReadUsage(const json& usage_file, ParsedOutput& p) {
  const json& models = JsonField(usage_file, "modelMetrics");
  if (!models.is_object()) return;
  for (const auto& [name, m] : models.items()) {
    (void)name;
    const json& u = JsonField(m, "usage");
    int64_t input = JsonInt(u, "inputTokens");
    int64_t cached = JsonInt(u, "cacheReadTokens");
    p.usage.input_tokens = SaturatingAdd(p.usage.input_tokens, input > cached ? input - cached : 0);
    p.usage.cache_read_tokens = SaturatingAdd(p.usage.cache_read_tokens, cached);
    p.usage.output_tokens = SaturatingAdd(p.usage.output_tokens, JsonInt(u, "outputTokens"));
  }
}

}  // namespace

ParsedOutput ParseCopilotOutput(std::string_view out, std::string_view err, int exit_code) {
  ParsedOutput p;
  std::optional<json> result;
  std::optional<json> session_error;
  std::string final_result;  // of the last model call
  std::string last_message;
  for (const auto& e : JsonLines(out)) {
    const std::string type = JsonStr(e, "type");
    const json& data = JsonField(e, "data");
    if (type == "assistant.message") {
      std::string content = JsonStr(data, "content");
      if (!content.empty()) last_message = content;
    } else if (type == "session.error") {
      session_error = data;
    } else if (type == "model.call_final_result") {
      final_result = JsonStr(data, "result");
    } else if (type == "result") {
      result = e;
    }
  }
  p.result_text = last_message;
  if (auto usage = TrailingJsonObject(out); usage && usage->contains("modelMetrics"))
    ReadUsage(*usage, p);

  if (session_error) {
    const json& se = *session_error;
    const std::string error_type = JsonStr(se, "errorType");
    const std::string msg = JsonStr(se, "message");
    const std::optional<int> status = JsonHttpStatus(se, "statusCode");
    FailureKind k = status ? ClassifyStatus(*status) : FailureKind::kNone;
    if (k == FailureKind::kNone) k = FromErrorType(error_type);
    if (k == FailureKind::kNone) k = FromFinalResult(final_result);
    if (k == FailureKind::kNone) k = ClassifyError(msg, std::nullopt);
    SetStructuredFailure(p, k == FailureKind::kNone ? FailureKind::kWorkerFailed : k,
                         "session.error errorType=" + error_type +
                             (status ? " statusCode=" + std::to_string(*status) : std::string()) +
                             (final_result.empty() ? "" : " final_result=" + final_result) + " " +
                             Clip(msg, 200),
                         msg);
    return p;
  }
  if (!result) {
    p.malformed = true;
    ClassifyUnstructuredFailure(p, out, err, exit_code);
    return p;
  }
  if (exit_code != 0 || JsonInt(*result, "exitCode") != 0) {
    p.failure = FailureKind::kNonZeroExit;
    p.rule = "exit-status";
    p.evidence = "[exit-status] exit=" + std::to_string(exit_code) +
                 " result.exitCode=" + std::to_string(JsonInt(*result, "exitCode")) + " " +
                 Clip(LastNonEmptyLine(err));
  }
  return p;
}

}  // namespace conclave::exec
