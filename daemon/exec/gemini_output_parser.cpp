// Contract: the "gemini-stream-json" / "gemini-json" parser (see output_parser.h).
//
// `gemini --output-format stream-json` (tests/e2e/fixtures/gemini/stream-json): JSONL of
// {"type":"init"}, {"type":"message","role":"user"|"assistant","content",["delta":true]},
// {"type":"tool_use"}, {"type":"tool_result","output"}, and last {"type":"result",
// "status":"success"|"error","error":{"type","message"},"stats":{"input_tokens" (incl.
// cached),"input","cached","output_tokens",...}}. The answer is the assistant text after the
// last tool event. A provider error's message is the CLI's "[API Error: ...]" wrapping the
// provider's JSON body ({"error":{"code":500,...}}) or its wording (429).
//
// `gemini --output-format json` (fixtures/gemini/json): success is one pretty-printed object
// {"session_id","response","stats":{"models":{<m>:{"tokens":{"input","prompt","candidates",
// "cached","thoughts"}}}}}; on failure stdout is empty and stderr ends with
// {"session_id","error":{"type","message","code"}} after stack traces.
//
// In both, a failed run exits with the HTTP code modulo 256 (401 -> 145, 429 -> 173, 500 ->
// 244; 1 for a connection failure): with an error event, an exit status of 144-255 is read
// as that code when the message names none.
#include "exec/output_parser.h"
#include "exec/parser_support.h"

namespace conclave::exec {
namespace {
using domain::FailureKind;
using nlohmann::json;
using namespace parser_detail;

// The HTTP code gemini encodes in its exit status (code mod 256) for 400..511.
std::optional<int> StatusFromExit(int exit_code) {
  if (exit_code >= 144 && exit_code <= 255) return exit_code + 256;
  return std::nullopt;
}

void ReadModelStats(const json& obj, ParsedOutput& p) {
  const json& models = JsonField(JsonField(obj, "stats"), "models");
  if (!models.is_object()) return;
  for (const auto& [name, m] : models.items()) {
    (void)name;
    const json& t = JsonField(m, "tokens");
    if (!t.is_object()) continue;
    int64_t cached = JsonInt(t, "cached");
    int64_t prompt = JsonInt(t, "prompt");
    int64_t input = JsonField(t, "input").is_number() ? JsonInt(t, "input")
                                                      : (prompt > cached ? prompt - cached : 0);
    p.usage.input_tokens = SaturatingAdd(p.usage.input_tokens, input);
    p.usage.cache_read_tokens = SaturatingAdd(p.usage.cache_read_tokens, cached);
    p.usage.output_tokens = SaturatingAdd(
        p.usage.output_tokens, SaturatingAdd(JsonInt(t, "candidates"), JsonInt(t, "thoughts")));
  }
}

// Classifies a gemini error object {"type","message",["code"]}.
void SetError(ParsedOutput& p, const json& error, int exit_code, std::string_view hint) {
  const std::string msg = JsonStr(error, "message");
  std::optional<int> code = JsonHttpStatus(error, "code");
  std::optional<int> status = code ? code : FindHttpStatus(msg);
  const char* source = code ? "error.code" : status ? "error.message" : "exit status";
  if (!status && ClassifyError(msg, std::nullopt) == FailureKind::kNone)
    status = StatusFromExit(exit_code);
  FailureKind k = status ? ClassifyStatus(*status) : FailureKind::kNone;
  if (k == FailureKind::kNone) k = ClassifyError(msg, std::nullopt);
  SetStructuredFailure(p, k == FailureKind::kNone ? FailureKind::kWorkerFailed : k,
                       "exit=" + std::to_string(exit_code) +
                           (status ? " status=" + std::to_string(*status) + " (" + source + ")"
                                   : std::string()) +
                           " " + Clip(msg, 200),
                       hint);
}

ParsedOutput ParseStream(const std::vector<json>& events, std::string_view out,
                         std::string_view err, int exit_code) {
  ParsedOutput p;
  std::optional<json> result;
  std::string text;
  for (const auto& e : events) {
    const std::string type = JsonStr(e, "type");
    if (type == "message" && JsonStr(e, "role") == "assistant") {
      if (!JsonBool(e, "delta")) text.clear();
      text += JsonStr(e, "content");
    } else if (type == "tool_use" || type == "tool_result") {
      text.clear();
    } else if (type == "result") {
      result = e;
    }
  }
  p.result_text = text;
  if (!result) {
    p.malformed = true;
    ClassifyUnstructuredFailure(p, out, err, exit_code);
    return p;
  }
  const json& stats = JsonField(*result, "stats");
  int64_t cached = JsonInt(stats, "cached");
  int64_t total_in = JsonInt(stats, "input_tokens");
  p.usage.input_tokens = JsonField(stats, "input").is_number()
                             ? JsonInt(stats, "input")
                             : (total_in > cached ? total_in - cached : 0);
  p.usage.cache_read_tokens = cached;
  p.usage.output_tokens = JsonInt(stats, "output_tokens");
  if (JsonStr(*result, "status") != "success") {
    SetError(p, JsonField(*result, "error"), exit_code, err);
    return p;
  }
  if (exit_code != 0) {
    p.failure = FailureKind::kNonZeroExit;
    p.rule = "exit-status";
    p.evidence = "[exit-status] exit=" + std::to_string(exit_code) + " " + Clip(LastNonEmptyLine(err));
  }
  return p;
}

}  // namespace

ParsedOutput ParseGeminiOutput(std::string_view out, std::string_view err, int exit_code) {
  std::vector<json> events = JsonLines(out);
  for (const auto& e : events) {
    if (JsonStr(e, "type") == "init" || JsonStr(e, "type") == "result")
      return ParseStream(events, out, err, exit_code);
  }
  // --output-format json
  ParsedOutput p;
  std::optional<json> obj;
  auto whole = ParseJson(out);
  if (!whole.is_discarded() && whole.is_object()) obj = std::move(whole);
  if (!obj) obj = TrailingJsonObject(out);
  std::optional<json> err_obj = TrailingJsonObject(err);
  const json* error = nullptr;
  if (obj && JsonField(*obj, "error").is_object())
    error = &JsonField(*obj, "error");
  else if (err_obj && JsonField(*err_obj, "error").is_object())
    error = &JsonField(*err_obj, "error");
  if (obj) {
    p.result_text = JsonStr(*obj, "response");
    ReadModelStats(*obj, p);
  }
  if (error) {
    SetError(p, *error, exit_code, err);
    return p;
  }
  if (exit_code == 145) {  // gemini's exit status for an authentication failure
    SetStructuredFailure(p, FailureKind::kAuthError, "exit=145 (HTTP 401 mod 256) " +
                                                         Clip(LastNonEmptyLine(err)));
    return p;
  }
  if (!obj || !JsonField(*obj, "response").is_string()) {
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
