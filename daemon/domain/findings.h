// Contract: typed reviewer findings (DESIGN §1 "Worker contract", seed 000 §4).
// A reviewer answers with {"findings": [ {id, severity, category, location {path, line},
// title, detail, stance, refs} ]}; an empty list is a valid answer ("nothing found").
// ParseFindingsJson validates a parsed object; ExtractFindings pulls it out of a worker's
// text (the last fenced ```json block mentioning "findings", else the whole text when it is a
// JSON object). Malformed input is reported as a value (ok=false, error naming the field and
// index) and is a contract violation for that round — never silently an empty list.
// Severity, stance and category names are stable strings stored in the database.
// Pure functions, no I/O, thread-compatible.
#ifndef CONCLAVE_DOMAIN_FINDINGS_H_
#define CONCLAVE_DOMAIN_FINDINGS_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::domain {

// Ordered strictest first: a smaller enumerator value is the stricter severity.
enum class Severity { kBlocker, kHigh, kMajor, kMedium, kLow, kInfo };

// new: raised here; agree: endorses a finding with that id; rebut: contests it;
// withdraw: takes back one's own finding (or one's earlier stance on another's finding);
// fixed / still_present: on a new revision of the artifact, an earlier finding is fixed / is
// still there (only the finding's own family closes it, by withdraw or fixed).
enum class Stance { kNew, kAgree, kRebut, kWithdraw, kFixed, kStillPresent };

struct Finding {
  std::string id;
  Severity severity = Severity::kInfo;
  std::string category;  // one of kFindingCategories
  std::string path;      // relative path, empty when the finding has no location
  int line = 0;          // 0 = whole file / unknown
  std::string title, detail;
  Stance stance = Stance::kNew;
  std::vector<std::string> refs;  // ids of other findings this one answers or builds on
};

struct FindingsParse {
  bool ok = false;
  std::string error;  // set when !ok, e.g. "findings[2].severity: expected one of ..."
  std::vector<Finding> findings;
};

inline constexpr std::string_view kFindingCategories[] = {"correctness", "security", "performance",
                                                          "maintainability", "docs"};
// The names in enum order: the one definition the parser, the schema and the briefs use.
inline constexpr std::string_view kSeverityNames[] = {"BLOCKER", "HIGH", "MAJOR",
                                                      "MEDIUM",  "LOW",  "INFO"};
inline constexpr std::string_view kStanceNames[] = {"new",   "agree", "rebut", "withdraw",
                                                    "fixed", "still_present"};

// "BLOCKER" | "HIGH" | "MAJOR" | "MEDIUM" | "LOW" | "INFO".
std::string_view SeverityName(Severity severity);
// Case-insensitive inverse of SeverityName; nullopt for anything else.
std::optional<Severity> ParseSeverity(std::string_view name);
// The stricter of the two (BLOCKER is strictest).
Severity Stricter(Severity a, Severity b);

// "new" | "agree" | "rebut" | "withdraw" | "fixed" | "still_present".
std::string_view StanceName(Stance stance);
// Case-insensitive inverse of StanceName; nullopt for anything else.
std::optional<Stance> ParseStance(std::string_view name);

// True for the five categories above (exact, lower case).
bool IsValidCategory(std::string_view category);

// Validates {"findings": [...]}. Required per item: id (non-empty string or integer),
// severity, category, title. Optional: location {path, line} (or a "path:line" string),
// detail, stance (default new), refs (array of strings). Ids must be unique in one answer.
FindingsParse ParseFindingsJson(const nlohmann::json& doc);

// Finds the findings object in free text (see the file comment) and validates it.
FindingsParse ExtractFindings(std::string_view text);

// The wire/storage form, the inverse of one ParseFindingsJson item.
nlohmann::json FindingToJson(const Finding& finding);

// "a|b|c" of a name list, for messages and briefs.
std::string JoinNames(const std::string_view* names, size_t count, std::string_view sep = "|");

}  // namespace conclave::domain

#endif  // CONCLAVE_DOMAIN_FINDINGS_H_
