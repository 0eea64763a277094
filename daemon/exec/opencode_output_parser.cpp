// Contract: the "opencode-jsonl" parser (see output_parser.h) for `opencode run --format
// json`. There is no final result object: the answer is the text of the last step that
// produced text; usage and cost are summed over "step_finish" events; a provider error is
// one {"type":"error","error":{"name":"APIError","data":{"message","statusCode",
// "isRetryable","responseHeaders":{...,"retry-after"}}}} event and exit 1
// (tests/e2e/fixtures/opencode).
#include "exec/output_parser.h"

namespace conclave::exec {
namespace {
using domain::FailureKind;
using nlohmann::json;
using namespace parser_detail;
}  // namespace

ParsedOutput ParseOpencodeOutput(std::string_view out, std::string_view err, int exit_code) {
  ParsedOutput p;
  auto events = JsonLines(out);
  std::string step_text;
  std::string last_text;
  bool finished = false;
  bool have_cost = false;
  double cost = 0;
  std::optional<json> error;
  for (const auto& e : events) {
    const std::string type = JsonStr(e, "type");
    const json& part = e.contains("part") ? e["part"] : json::object();
    if (type == "step_start") {
      step_text.clear();
    } else if (type == "text") {
      if (!step_text.empty()) step_text += "\n";
      step_text += JsonStr(part, "text");
      last_text = step_text;
    } else if (type == "step_finish") {
      finished = true;
      if (auto it = part.find("tokens"); it != part.end() && it->is_object()) {
        p.usage.input_tokens += JsonInt(*it, "input");
        p.usage.output_tokens += JsonInt(*it, "output") + JsonInt(*it, "reasoning");
        if (auto c = it->find("cache"); c != it->end() && c->is_object()) {
          p.usage.cache_read_tokens += JsonInt(*c, "read");
        }
      }
      if (auto it = part.find("cost"); it != part.end() && it->is_number()) {
        cost += it->get<double>();
        have_cost = true;
      }
    } else if (type == "error") {
      error = e.contains("error") ? e["error"] : json::object();
    }
  }
  p.result_text = last_text;
  if (have_cost && cost > 0) p.reported_cost_usd = cost;

  if (error) {
    const json data =
        error->is_object() && error->contains("data") ? (*error)["data"] : json::object();
    std::string name = error->is_object() ? JsonStr(*error, "name") : "";
    std::string msg = data.is_object() ? JsonStr(data, "message") : "";
    std::optional<int> status;
    if (data.is_object()) {
      if (auto it = data.find("statusCode"); it != data.end() && it->is_number_integer())
        status = it->get<int>();
    }
    FailureKind k = ClassifyError(name + ": " + msg, status);
    if (k == FailureKind::kNone && name == "ProviderAuthError") k = FailureKind::kAuthError;
    p.failure = k == FailureKind::kNone ? FailureKind::kWorkerFailed : k;
    p.evidence = "error " + name +
                 (status ? " statusCode=" + std::to_string(*status) : std::string()) + " " +
                 Clip(msg, 200);
    if (k == FailureKind::kRateLimited && data.is_object()) {
      if (auto h = data.find("responseHeaders"); h != data.end() && h->is_object()) {
        if (auto ra = h->find("retry-after"); ra != h->end() && ra->is_string()) {
          p.retry_after_s = FindRetryAfter("retry-after: " + ra->get<std::string>());
        }
      }
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
    p.evidence = "exit=" + std::to_string(exit_code) + " " + Clip(LastNonEmptyLine(err));
  }
  return p;
}

}  // namespace conclave::exec
