// Contract: the "qwen-stream-json" / "qwen-json" parser (see output_parser.h) for
// `qwen --output-format stream-json [--include-partial-messages]` (JSONL: system/init,
// stream_event deltas, assistant/user messages, a result object last) and
// `--output-format json` (the same objects as one JSON array).
//
// Shapes (tests/e2e/fixtures/qwen/{stream-json,json}): the result object carries "result"
// (the answer), "usage" {input_tokens (incl. cached), output_tokens, cache_read_input_tokens}
// and, with --json-schema, "structured_result". qwen reports provider errors with exit 0,
// "is_error":false and a result text starting with "[API Error: <status> <message>]" — the
// CLI's own marker, so the text is its structured error (a model never writes it):
// classified from the status and wording there. A connection failure reads "[API Error:
// Connection error. (cause: fetch failed)]". An is_error result has "error":{"message"}.
#include "exec/output_parser.h"
#include "exec/parser_support.h"

namespace conclave::exec {
namespace {
using domain::FailureKind;
using nlohmann::json;
using namespace parser_detail;

std::optional<json> FindResult(std::string_view out) {
  std::optional<json> last;
  size_t first = out.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && out[first] == '[') {
    auto whole = ParseJson(out);
    if (!whole.is_discarded() && whole.is_array()) {
      for (auto& e : whole) {
        if (JsonStr(e, "type") == "result") last = e;
      }
      return last;
    }
  }
  for (auto& e : JsonLines(out)) {
    if (JsonStr(e, "type") == "result") last = std::move(e);
  }
  return last;
}

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

ParsedOutput ParseQwenOutput(std::string_view out, std::string_view err, int exit_code) {
  ParsedOutput p;
  auto r = FindResult(out);
  if (!r) {
    p.malformed = true;
    ClassifyUnstructuredFailure(p, out, err, exit_code);
    return p;
  }
  p.result_text = JsonStr(*r, "result");
  const json& usage = JsonField(*r, "usage");
  int64_t input = JsonInt(usage, "input_tokens");
  int64_t cached = JsonInt(usage, "cache_read_input_tokens");
  p.usage.input_tokens = input > cached ? input - cached : 0;
  p.usage.cache_read_tokens = cached;
  p.usage.output_tokens = JsonInt(usage, "output_tokens");
  p.reported_cost_usd = JsonNonNegative(*r, "total_cost_usd");
  const json& structured = JsonField(*r, "structured_result");
  if (!structured.is_null()) p.structured_output = structured;

  const bool is_error = JsonBool(*r, "is_error");
  const bool api_error = p.result_text.rfind("[API Error", 0) == 0;
  if (is_error || api_error) {
    std::string msg = api_error ? p.result_text : JsonStr(JsonField(*r, "error"), "message");
    FailureKind k = ClassifyError(msg, std::nullopt);
    SetStructuredFailure(p, k == FailureKind::kNone ? FailureKind::kWorkerFailed : k,
                         std::string("is_error=") + (is_error ? "true" : "false") +
                             " subtype=" + JsonStr(*r, "subtype") +
                             (api_error ? " result=" : " error.message=") + Clip(FirstLine(msg), 200),
                         msg);
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
