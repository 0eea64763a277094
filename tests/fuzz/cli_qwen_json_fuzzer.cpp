// Fuzz target: the "qwen-json" CLI output parser (exec/*_output_parser.cpp) via ParseCliOutput.
// Input: byte 0 = exit status, then stdout, NUL, stderr (fuzz_input.h).
#include "cli_output_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return conclave::fuzz::FuzzCliOutput("qwen-json", data, size);
}
