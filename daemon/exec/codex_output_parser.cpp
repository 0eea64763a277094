// Contract: the "codex-jsonl" parser (see output_parser.h) for `codex exec --json`.
//
// Shapes (tests/e2e/fixtures/codex/jsonl): thread.started, turn.started, item.started /
// item.completed (agent_message with "text", command_execution with the tool's output, and
// an informational {"type":"error"} *item* some versions print even on success, e.g. "Model
// metadata ... not found"), then turn.completed {"usage":{input_tokens, cached_input_tokens,
// output_tokens}} on success, or top-level {"type":"error","message"} + turn.failed
// {"error":{"message"}} on failure (exit 1). codex prints no cost, and no event while the
// model streams one answer (an answer shows up whole in item.completed). A connection
// failure prints endless "Reconnecting... waiting for network" error events and never exits
// by itself: the daemon's timeout ends it. With --output-schema the final agent_message is
// the schema-shaped JSON: when it parses as one JSON object it is the structured output.
#include "exec/output_parser.h"
#include "exec/parser_support.h"

namespace conclave::exec {
namespace {
using domain::FailureKind;
using nlohmann::json;
using namespace parser_detail;
}  // namespace

ParsedOutput ParseCodexOutput(std::string_view out, std::string_view err, int exit_code) {
  ParsedOutput p;
  bool completed = false;
  std::optional<std::string> failed_message;
  std::string last_error_event;
  std::string last_agent_message;
  for (const auto& e : JsonLines(out)) {
    const std::string type = JsonStr(e, "type");
    if (type == "item.completed") {
      const json& item = JsonField(e, "item");
      if (JsonStr(item, "type") == "agent_message") last_agent_message = JsonStr(item, "text");
      // item type "error" is informational (printed even on success): ignored.
    } else if (type == "turn.completed") {
      completed = true;
      const json& usage = JsonField(e, "usage");
      int64_t input = JsonInt(usage, "input_tokens");
      int64_t cached = JsonInt(usage, "cached_input_tokens");
      p.usage.input_tokens = SaturatingAdd(p.usage.input_tokens, input > cached ? input - cached : 0);
      p.usage.cache_read_tokens = SaturatingAdd(p.usage.cache_read_tokens, cached);
      p.usage.output_tokens = SaturatingAdd(p.usage.output_tokens, JsonInt(usage, "output_tokens"));
    } else if (type == "turn.failed") {
      const json& error = JsonField(e, "error");
      failed_message = error.is_object() ? JsonStr(error, "message") : error.dump();
    } else if (type == "error") {
      last_error_event = JsonStr(e, "message");
    }
  }
  p.result_text = last_agent_message;
  if (!last_agent_message.empty() && last_agent_message.front() == '{') {
    auto j = ParseJson(last_agent_message);
    if (!j.is_discarded() && j.is_object()) p.structured_output = std::move(j);
  }

  if (failed_message || (!completed && !last_error_event.empty())) {
    // codex's error events carry only a message (its own wording of the provider's answer,
    // e.g. "unexpected status 401 Unauthorized: ..."), so the message is the structure.
    std::string msg = failed_message ? *failed_message : last_error_event;
    FailureKind k = ClassifyError(msg, std::nullopt);
    SetStructuredFailure(p, k == FailureKind::kNone ? FailureKind::kWorkerFailed : k,
                         std::string(failed_message ? "turn.failed: " : "error: ") + Clip(msg),
                         msg);
    return p;
  }
  if (!completed) {
    p.malformed = true;
    ClassifyUnstructuredFailure(p, out, err, exit_code);
    return p;
  }
  if (exit_code != 0) {
    p.failure = FailureKind::kNonZeroExit;
    p.rule = "exit-status";
    p.evidence = "[exit-status] exit=" + std::to_string(exit_code) +
                 " after turn.completed: " + Clip(LastNonEmptyLine(err));
  }
  return p;
}

}  // namespace conclave::exec
