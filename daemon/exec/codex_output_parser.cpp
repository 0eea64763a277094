// Contract: the "codex-jsonl" parser (see output_parser.h) for `codex exec --json`.
//
// Shapes (tests/e2e/fixtures/codex): thread.started, turn.started, item.started /
// item.completed (agent_message with "text", command_execution, and a spurious
// {"type":"error"} *item* even on success, e.g. "Model metadata ... not found"), then
// turn.completed {"usage":{input_tokens, cached_input_tokens, output_tokens}} on success or
// top-level {"type":"error","message"} + turn.failed {"error":{"message"}} on failure
// (exit 1). codex prints no cost. A connection failure prints endless "Reconnecting...
// waiting for network" error events and never exits by itself: the daemon's timeout ends it.
#include "exec/output_parser.h"

namespace conclave::exec {
namespace {
using domain::FailureKind;
using nlohmann::json;
using namespace parser_detail;
}  // namespace

ParsedOutput ParseCodexOutput(std::string_view out, std::string_view err, int exit_code) {
  ParsedOutput p;
  auto events = JsonLines(out);
  bool completed = false;
  std::optional<std::string> failed_message;
  std::string last_error_event;
  std::string last_agent_message;
  for (const auto& e : events) {
    const std::string type = JsonStr(e, "type");
    if (type == "item.completed") {
      const json& item = e.contains("item") ? e["item"] : json::object();
      if (JsonStr(item, "type") == "agent_message") last_agent_message = JsonStr(item, "text");
      // item type "error" is informational (printed even on success): ignored.
    } else if (type == "turn.completed") {
      completed = true;
      if (auto it = e.find("usage"); it != e.end() && it->is_object()) {
        int64_t input = JsonInt(*it, "input_tokens");
        int64_t cached = JsonInt(*it, "cached_input_tokens");
        p.usage.input_tokens += input > cached ? input - cached : 0;
        p.usage.cache_read_tokens += cached;
        p.usage.output_tokens += JsonInt(*it, "output_tokens");
      }
    } else if (type == "turn.failed") {
      const json& error = e.contains("error") ? e["error"] : json::object();
      failed_message = error.is_object() ? JsonStr(error, "message") : error.dump();
    } else if (type == "error") {
      last_error_event = JsonStr(e, "message");
    }
  }
  p.result_text = last_agent_message;

  if (failed_message || (!completed && !last_error_event.empty())) {
    std::string msg = failed_message ? *failed_message : last_error_event;
    FailureKind k = ClassifyError(msg, std::nullopt);
    p.failure = k == FailureKind::kNone ? FailureKind::kWorkerFailed : k;
    p.evidence = std::string(failed_message ? "turn.failed: " : "error: ") + Clip(msg);
    if (k == FailureKind::kRateLimited) p.retry_after_s = FindRetryAfter(msg);
    return p;
  }
  if (!completed) {
    p.malformed = true;
    ClassifyUnstructuredFailure(p, out, err, exit_code);
    return p;
  }
  if (exit_code != 0) {
    p.failure = FailureKind::kNonZeroExit;
    p.evidence = "exit=" + std::to_string(exit_code) +
                 " after turn.completed: " + Clip(LastNonEmptyLine(err));
  }
  return p;
}

}  // namespace conclave::exec
