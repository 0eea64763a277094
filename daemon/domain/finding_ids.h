// Finding identity is the daemon's, not a reviewer's (issue 12 item 4). A reviewer names its
// own new findings with any short id ("F1"); the daemon stores them as
// "r<round>.<family>.<id>" — e.g. "r2.openai.F1" — where <round> is the round's ordinal in the
// whole review (rounds of earlier revisions count, so ids never repeat across revisions) and
// <family> the reviewer's family, lower case. A reviewer answers an earlier finding (agree,
// rebut, withdraw, fixed, still_present) only by naming its full id, as its id or in refs; a
// reused bare id is a new finding of its own. So two reviewers that both say "F1" never agree
// by accident.
// NamespaceFindings turns one round's raw answer into that form:
//   - stance new → id = prefix + the reviewer's id (characters outside [A-Za-z0-9._-] become
//     '_'; a clash inside the round gets "-2", "-3" ...);
//   - any other stance naming a known full id (as id, else each known id in refs) → one entry
//     per named id, with that id (refs keep only known ids);
//   - any other stance naming nothing known: agree / rebut / still_present become a new
//     finding (stance new, namespaced id); withdraw / fixed are dropped (they close nothing).
// Pure, thread-compatible.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "domain/findings.h"

namespace conclave::domain {

// "r<ordinal>.<family>." with the family lower-cased and reduced to [a-z0-9_-].
std::string FindingIdPrefix(int ordinal, std::string_view family);

std::vector<Finding> NamespaceFindings(int ordinal, std::string_view family,
                                       const std::vector<Finding>& answer,
                                       const std::set<std::string>& known_ids);

}  // namespace conclave::domain
