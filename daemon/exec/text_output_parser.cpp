// Contract: the "text" parser (see output_parser.h). stdout is the answer; a non-zero exit
// is kNonZeroExit with the last non-empty stderr (else stdout) line as evidence. -1 (killed
// by a signal) is left to the caller, which knows the signal and why it was sent.
#include "exec/output_parser.h"
#include "exec/parser_support.h"

namespace conclave::exec {

ParsedOutput ParseTextOutput(std::string_view out, std::string_view err, int exit_code) {
  ParsedOutput p;
  p.result_text = std::string(out);
  if (exit_code != 0 && exit_code != -1) {
    p.failure = domain::FailureKind::kNonZeroExit;
    p.rule = "exit-status";
    std::string line = parser_detail::LastNonEmptyLine(err);
    if (line.empty()) line = parser_detail::LastNonEmptyLine(out);
    p.evidence = "exit " + std::to_string(exit_code) + ": " + parser_detail::Clip(line);
  }
  return p;
}

}  // namespace conclave::exec
