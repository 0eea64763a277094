// Parser dispatch by name. (Interim: the text parser; the CLI adapters add the others.)
#include "exec/output_parser.h"

namespace conclave::exec {
namespace {
std::string LastNonEmptyLine(std::string_view text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string_view::npos) return "";
  size_t start = text.rfind('\n', end);
  start = start == std::string_view::npos ? 0 : start + 1;
  return std::string(text.substr(start, end - start + 1));
}
}  // namespace

bool IsKnownParser(std::string_view name) { return name == "text"; }

ParsedOutput ParseCliOutput(std::string_view parser, std::string_view stdout_text,
                            std::string_view stderr_tail, int exit_code) {
  ParsedOutput out;
  out.result_text = std::string(stdout_text);
  if (exit_code != 0 && exit_code != -1) {
    out.failure = domain::FailureKind::kNonZeroExit;
    std::string line = LastNonEmptyLine(stderr_tail);
    if (line.empty()) line = LastNonEmptyLine(stdout_text);
    out.evidence = "exit " + std::to_string(exit_code) + ": " + line;
  }
  return out;
}

}  // namespace conclave::exec
