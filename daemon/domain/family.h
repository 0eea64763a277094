// Model families (DESIGN §1 "Profile"): the one rule for comparing them. Family names compare
// case-insensitively (ASCII), everywhere — the cross-family rule, reconciliation, the gate and
// what the API shows. Pure.
#pragma once

#include <string_view>

namespace conclave::domain {

bool SameFamily(std::string_view a, std::string_view b);
// A finding or reviewer is foreign to the writer when its family differs (an unknown, empty
// family counts as foreign for findings: the gate then fails closed).
inline bool IsForeignFamily(std::string_view family, std::string_view writer_family) {
  return family.empty() || !SameFamily(family, writer_family);
}

}  // namespace conclave::domain
