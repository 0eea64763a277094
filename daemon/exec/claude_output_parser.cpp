// Contract: the "claude-stream-json" / "claude-json" parser (see output_parser.h) for
// `claude -p --output-format stream-json --verbose [--include-partial-messages]` (JSONL:
// system/init, stream_event deltas, assistant/user messages, one result object last) and
// `--output-format json` (the result object alone). Also serves DeepSeek / GLM / Kimi, which
// run the claude CLI against other endpoints.
//
// Shapes (tests/e2e/fixtures/claude/{stream-json,json}): success -> {"type":"result",
// "subtype":"success","is_error":false,"result":...,"total_cost_usd":...,"usage":{...},
// "structured_output":{...} (with --json-schema)}; an API error -> exit 1, is_error:true,
// "api_error_status":500|429|401 (null for a connection error) and the CLI's message in
// "result", preceded by a synthetic assistant message ("model":"<synthetic>") whose "error"
// field is the error type (server_error, rate_limit, authentication_failed ...);
// --max-budget-usd exceeded -> subtype "error_max_budget_usd" with "errors":[...].
// Structure first: api_error_status, then the CLI's own error message (the is_error result
// text, errors[]), then the synthetic message's error type. The model's text and tool
// results are never classified.
#include "exec/output_parser.h"
#include "exec/parser_support.h"

namespace conclave::exec {
namespace {

using domain::FailureKind;
using nlohmann::json;
using namespace parser_detail;

struct ClaudeEvents {
  std::optional<json> result;      // the last {"type":"result"}
  std::string synthetic_error;     // "error" of the last synthetic assistant message
  std::string synthetic_text;      // its text (the CLI's error message)
  std::string last_assistant_text; // text of the last assistant message (for a cut run)
};

std::string TextOf(const json& message) {
  std::string text;
  const json& content = JsonField(message, "content");
  if (!content.is_array()) return text;
  for (const auto& block : content) {
    if (JsonStr(block, "type") == "text") text += JsonStr(block, "text");
  }
  return text;
}

ClaudeEvents ReadEvents(std::string_view out) {
  ClaudeEvents ev;
  for (auto& j : JsonLines(out)) {
    const std::string type = JsonStr(j, "type");
    if (type == "result") {
      ev.result = std::move(j);
    } else if (type == "assistant") {
      const json& msg = JsonField(j, "message");
      std::string err = JsonStr(j, "error");
      if (!err.empty() || JsonStr(msg, "model") == "<synthetic>") {
        ev.synthetic_error = err;
        ev.synthetic_text = TextOf(msg);
      } else {
        std::string t = TextOf(msg);
        if (!t.empty()) ev.last_assistant_text = t;
      }
    }
  }
  if (!ev.result) {
    // --output-format json may be pretty-printed on some versions: try the whole text.
    auto whole = ParseJson(out);
    if (!whole.is_discarded() && JsonStr(whole, "type") == "result") ev.result = std::move(whole);
  }
  return ev;
}

std::string JoinErrors(const json& r) {
  std::string s;
  const json& errors = JsonField(r, "errors");
  if (!errors.is_array()) return s;
  for (const auto& e : errors) {
    if (!s.empty()) s += "; ";
    s += e.is_string() ? e.get<std::string>() : e.dump();
  }
  return s;
}

// The synthetic message's error type (what the CLI made of the provider's answer).
FailureKind FromErrorType(const std::string& type) {
  if (type == "authentication_failed" || type == "authentication_error" ||
      type == "permission_error" || type == "billing_error")
    return FailureKind::kAuthError;
  if (type == "rate_limit" || type == "rate_limit_error") return FailureKind::kRateLimited;
  if (type == "server_error" || type == "overloaded_error" || type == "api_error")
    return FailureKind::kProviderUnavailable;
  return FailureKind::kNone;
}

void ReadResult(const json& r, ParsedOutput& p) {
  p.result_text = JsonStr(r, "result");
  p.reported_cost_usd = JsonNonNegative(r, "total_cost_usd");
  const json& usage = JsonField(r, "usage");
  p.usage.input_tokens =
      SaturatingAdd(JsonInt(usage, "input_tokens"), JsonInt(usage, "cache_creation_input_tokens"));
  p.usage.output_tokens = JsonInt(usage, "output_tokens");
  p.usage.cache_read_tokens = JsonInt(usage, "cache_read_input_tokens");
  const json& so = JsonField(r, "structured_output");
  if (!so.is_null()) p.structured_output = so;
}

}  // namespace

ParsedOutput ParseClaudeOutput(std::string_view out, std::string_view err, int exit_code) {
  ParsedOutput p;
  ClaudeEvents ev = ReadEvents(out);
  if (!ev.result) {
    p.malformed = true;
    p.result_text = ev.last_assistant_text;
    // Cut before the result (killed, crashed): a synthetic error message still says why.
    FailureKind k = ClassifyError(ev.synthetic_text, std::nullopt);
    if (k == FailureKind::kNone) k = FromErrorType(ev.synthetic_error);
    if (k != FailureKind::kNone) {
      SetStructuredFailure(p, k,
                           "assistant.error=" + ev.synthetic_error + " " + Clip(ev.synthetic_text, 200),
                           ev.synthetic_text + "\n" + std::string(err));
      return p;
    }
    ClassifyUnstructuredFailure(p, out, err, exit_code);
    return p;
  }
  const json& r = *ev.result;
  ReadResult(r, p);

  const std::string subtype = JsonStr(r, "subtype");
  const bool is_error = JsonBool(r, "is_error");
  const std::optional<int> status = JsonHttpStatus(r, "api_error_status");

  if (subtype == "error_max_budget_usd") {
    SetStructuredFailure(p, FailureKind::kBudgetExceeded,
                         "subtype=error_max_budget_usd " + Clip(JoinErrors(r)));
    return p;
  }
  if (!is_error && subtype == "success") {
    if (exit_code != 0) {
      p.failure = FailureKind::kNonZeroExit;
      p.rule = "exit-status";
      p.evidence = "[exit-status] exit=" + std::to_string(exit_code) + " with is_error=false";
    }
    return p;
  }
  // An error result. subtype "success" + is_error is the API-error shape: "result" is the
  // CLI's own message. Other subtypes (error_max_turns, error_during_execution ...) carry the
  // model's last text in "result", so only errors[] is read.
  const std::string cli_message = subtype == "success" ? p.result_text : JoinErrors(r);
  FailureKind k = status ? ClassifyStatus(*status) : FailureKind::kNone;
  if (k == FailureKind::kNone) k = ClassifyError(cli_message, std::nullopt);
  if (k == FailureKind::kNone) k = FromErrorType(ev.synthetic_error);
  if (k == FailureKind::kNone) k = FailureKind::kWorkerFailed;
  SetStructuredFailure(p, k,
                       "is_error=" + std::string(is_error ? "true" : "false") +
                           " subtype=" + subtype +
                           (status ? " api_error_status=" + std::to_string(*status) : "") +
                           (ev.synthetic_error.empty() ? "" : " error=" + ev.synthetic_error) +
                           " message=" + Clip(cli_message, 200),
                       cli_message + "\n" + std::string(err));
  return p;
}

}  // namespace conclave::exec
