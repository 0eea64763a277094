// Contract: the "gemini-json" parser (see output_parser.h) for `gemini --output-format
// json`. Success: stdout is one pretty-printed object {"session_id","response","stats":
// {"models":{<m>:{"tokens":{"input","prompt","candidates","cached","thoughts"}}}}}.
// Failure: stdout is empty and stderr ends with {"session_id","error":{"type","message",
// "code"}} after stack traces; the exit status is the error code modulo 256 (401 -> 145,
// 429 -> 173, 500 -> 244; 1 for a connection failure) (tests/e2e/fixtures/gemini).
#include "exec/output_parser.h"

namespace conclave::exec {
namespace {
using domain::FailureKind;
using nlohmann::json;
using namespace parser_detail;

void ReadStats(const json& obj, ParsedOutput& p) {
  auto st = obj.find("stats");
  if (st == obj.end() || !st->is_object()) return;
  auto models = st->find("models");
  if (models == st->end() || !models->is_object()) return;
  for (const auto& [name, m] : models->items()) {
    (void)name;
    if (!m.is_object() || !m.contains("tokens")) continue;
    const json& t = m["tokens"];
    int64_t cached = JsonInt(t, "cached");
    int64_t input = t.contains("input") ? JsonInt(t, "input") : JsonInt(t, "prompt") - cached;
    p.usage.input_tokens += input > 0 ? input : 0;
    p.usage.cache_read_tokens += cached;
    p.usage.output_tokens += JsonInt(t, "candidates") + JsonInt(t, "thoughts");
  }
}
}  // namespace

ParsedOutput ParseGeminiOutput(std::string_view out, std::string_view err, int exit_code) {
  ParsedOutput p;
  std::optional<json> obj;
  auto whole = ParseJson(out);
  if (!whole.is_discarded() && whole.is_object()) obj = std::move(whole);
  if (!obj) obj = TrailingJsonObject(out);
  std::optional<json> err_obj = TrailingJsonObject(err);

  const json* error = nullptr;
  if (obj && obj->contains("error") && (*obj)["error"].is_object())
    error = &(*obj)["error"];
  else if (err_obj && err_obj->contains("error") && (*err_obj)["error"].is_object())
    error = &(*err_obj)["error"];

  if (obj) {
    if (auto it = obj->find("response"); it != obj->end() && it->is_string()) p.result_text = *it;
    ReadStats(*obj, p);
  }
  if (error) {
    std::string msg = JsonStr(*error, "message");
    std::optional<int> code;
    if (auto it = error->find("code"); it != error->end() && it->is_number_integer())
      code = it->get<int>();
    std::optional<int> status = (code && *code >= 400 && *code <= 599) ? code : std::nullopt;
    FailureKind k = ClassifyError(msg, status);
    if (k == FailureKind::kNone && exit_code == 145) k = FailureKind::kAuthError;
    p.failure = k == FailureKind::kNone ? FailureKind::kWorkerFailed : k;
    p.evidence = "exit=" + std::to_string(exit_code) +
                 " error.code=" + (code ? std::to_string(*code) : std::string("?")) + " " +
                 Clip(msg, 200);
    if (k == FailureKind::kRateLimited) p.retry_after_s = FindRetryAfter(std::string(err));
    return p;
  }
  if (exit_code == 145) {  // gemini's exit status for an authentication failure
    p.failure = FailureKind::kAuthError;
    p.evidence = "exit=145 " + Clip(LastNonEmptyLine(err));
    return p;
  }
  if (!obj || !obj->contains("response")) {
    p.malformed = true;
    if (p.result_text.empty()) p.result_text = std::string(out);
    ClassifyUnstructuredFailure(p, out, err, exit_code);
    return p;
  }
  if (exit_code != 0) {
    p.failure = FailureKind::kNonZeroExit;
    p.evidence = "exit=" + std::to_string(exit_code) + " " + Clip(LastNonEmptyLine(err));
  }
  return p;
}

}  // namespace conclave::exec
