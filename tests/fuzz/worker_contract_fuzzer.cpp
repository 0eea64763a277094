// Fuzz target: the worker output contract (domain/worker_contract). Input: a worker's final
// answer text. Properties: every contract section is either present or listed missing, and
// no changed file is absolute or climbs out of the worktree.
#include "domain/worker_contract.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace conclave;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  domain::WorkerContract c = domain::ParseWorkerContract(text);
  for (std::string_view name : domain::kContractSections) {
    bool present = c.sections.count(std::string(name)) > 0;
    bool missing = false;
    for (const auto& m : c.missing) missing |= m == name;
    if (present == missing) fuzz::PropertyFailed("section both present and missing (or neither)");
  }
  for (const auto& f : c.changed_files) {
    if (f.empty() || f[0] == '/' || f[0] == '~') fuzz::PropertyFailed("absolute changed file");
    if (("/" + f + "/").find("/../") != std::string::npos) fuzz::PropertyFailed("'..' in path");
  }
  (void)domain::ContractToJson(c).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
