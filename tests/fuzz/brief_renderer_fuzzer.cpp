// Fuzz target: brief section parsing and template rendering (exec/brief_renderer). Input:
// template, NUL, brief, NUL, title, NUL, extra (fuzz_input.h). Properties: every parsed
// section is trimmed; rendering without a template keeps the whole brief.
#include "exec/brief_renderer.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace conclave;
  auto f = fuzz::Fields(data, size, 4);
  exec::BriefInput in;
  in.task_id = static_cast<int64_t>(size) * 7919;
  in.attempt = static_cast<int>(size % 5);
  in.brief = std::string(f[1]);
  in.title = std::string(f[2]);
  in.extra = std::string(f[3]);
  in.role = "implementer";
  in.hypothesis = in.title;
  in.require_contract = size % 2 == 0;
  for (const auto& [name, body] : exec::ParseBriefSections(in.brief)) {
    if (!body.empty() && (body.front() == ' ' || body.back() == '\n')) {
      fuzz::PropertyFailed("section not trimmed");
    }
  }
  (void)exec::RenderTemplate(std::string(f[0]), in);
  std::string plain = exec::RenderBrief("", "", in);  // no template: no file is read
  if (plain.compare(0, in.brief.size(), in.brief) != 0) fuzz::PropertyFailed("brief lost");
  return 0;
}
