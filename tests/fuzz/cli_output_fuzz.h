// The body shared by the cli_* fuzz targets: one model CLI's stdout/stderr/exit status through
// exec::ParseCliOutput under the named parser, then what the daemon does with the result
// (service/completion_facts.cpp): stores the structured output and the evidence, and reads
// the worker contract from the answer text. Properties: no crash, no UB, no leak; counts and
// hints are never negative.
#pragma once

#include "domain/worker_contract.h"
#include "exec/output_parser.h"
#include "fuzz_input.h"

namespace conclave::fuzz {

inline int FuzzCliOutput(std::string_view parser, const uint8_t* data, size_t size) {
  CliRun run = ReadCliRun(data, size);
  exec::ParsedOutput p = exec::ParseCliOutput(parser, run.out, run.err, run.exit_code);
  if (!exec::IsKnownParser(parser)) PropertyFailed("parser name unknown");
  if (p.structured_output) {
    (void)p.structured_output->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  if (p.retry_after_s && *p.retry_after_s < 0) PropertyFailed("negative retry-after");
  if (p.usage.input_tokens < 0 || p.usage.output_tokens < 0 || p.usage.cache_read_tokens < 0) {
    PropertyFailed("negative token count");
  }
  domain::WorkerContract c = domain::ParseWorkerContract(p.result_text);
  (void)domain::ContractToJson(c).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}

}  // namespace conclave::fuzz
