// Fuzz target: reviewer findings (domain/findings), both forms the daemon reads from a
// reviewer (service/review_rounds.cpp): free text with a fenced ```json block
// (ExtractFindings) and a structured output object (ParseFindingsJson on what the CLI parser's
// ParseJson accepted). Input: the reviewer's text. Properties: an accepted answer has unique,
// non-empty ids, valid categories and non-negative lines, and survives its own round trip
// (FindingToJson -> ParseFindingsJson).
#include "domain/findings.h"
#include "exec/parser_support.h"
#include "fuzz_input.h"

namespace {
using namespace conclave;

void Check(const domain::FindingsParse& parsed) {
  if (!parsed.ok) {
    if (parsed.error.empty()) fuzz::PropertyFailed("rejected without an error");
    if (!parsed.findings.empty()) fuzz::PropertyFailed("rejected but kept findings");
    return;
  }
  nlohmann::json items = nlohmann::json::array();
  for (const auto& f : parsed.findings) {
    if (f.id.empty() || f.title.empty()) fuzz::PropertyFailed("empty id or title accepted");
    if (!domain::IsValidCategory(f.category)) fuzz::PropertyFailed("bad category accepted");
    if (f.line < 0) fuzz::PropertyFailed("negative line accepted");
    items.push_back(domain::FindingToJson(f));
  }
  (void)items.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto again = domain::ParseFindingsJson({{"findings", items}});
  if (!again.ok || again.findings.size() != parsed.findings.size()) {
    fuzz::PropertyFailed("accepted findings do not survive FindingToJson");
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Check(domain::ExtractFindings(text));
  auto doc = exec::parser_detail::ParseJson(text);
  if (!doc.is_discarded()) Check(domain::ParseFindingsJson(doc));
  return 0;
}
