// The reference redaction for tests and the redactor fuzz target: every form of every secret
// (exec::SecretForms) compared at every byte, longest first — what the redactor did before
// its forms were indexed by first byte. Slow on purpose; never used by the daemon.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "exec/redactor.h"

namespace conclave::testing {

inline std::string NaiveRedact(const std::string& text, const std::vector<std::string>& secrets) {
  std::vector<std::string> forms;
  for (const auto& s : secrets) {
    for (const auto& f : exec::SecretForms(s)) {
      if (std::find(forms.begin(), forms.end(), f) == forms.end()) forms.push_back(f);
    }
  }
  std::stable_sort(forms.begin(), forms.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  std::string out;
  for (size_t i = 0; i < text.size();) {
    auto it = std::find_if(forms.begin(), forms.end(),
                           [&](const std::string& f) { return text.compare(i, f.size(), f) == 0; });
    if (it == forms.end()) {
      out += text[i++];
    } else {
      out += exec::kRedacted;
      i += it->size();
    }
  }
  return out;
}

}  // namespace conclave::testing
