// Contract: the worker output contract (DESIGN §1 "Worker contract", seed 001 §4). Every
// worker's final text carries the sections SUMMARY / EVIDENCE / CHANGES / RISKS / BLOCKERS.
// ParseWorkerContract splits the text into those sections and extracts:
//   - headings, case-insensitive, outside ``` fences, each on its own line, in any of the
//     forms `SUMMARY:` (text may follow on the same line), `## SUMMARY`, `**SUMMARY**`,
//     `**SUMMARY:**`, `SUMMARY` alone; singular forms (CHANGE, RISK, BLOCKER) are accepted;
//     a section seen twice is concatenated; a missing heading is listed in `missing`
//     (a present but empty section is not missing);
//   - status: "PASS" | "FAIL" | "BLOCKED" | "" — from a `STATUS: X` line (PASSED/OK/SUCCESS
//     map to PASS, FAILED/FAILURE to FAIL), else from an upper-case FAIL/FAILED/BLOCKED/PASS
//     word leading the SUMMARY text;
//   - changed_files: relative paths named under CHANGES, in order, without duplicates —
//     one per line from `- path: what`, `* \`path\``, `M path` (git status letters; a rename
//     `R old -> new` yields new), `1. path (new)`; every back-quoted path on a line also counts.
//     A token is a path when it was back-quoted or contains '/' or a '.' extension (or is a
//     well-known extensionless name like Makefile). Absolute paths, `~` and `..` components
//     are rejected; "none" / "-" / "n/a" name nothing.
// The daemon checks changed_files against the worktree (written ≠ persisted); this code only
// reads text. Pure functions, no I/O, thread-compatible.
#ifndef CONCLAVE_DOMAIN_WORKER_CONTRACT_H_
#define CONCLAVE_DOMAIN_WORKER_CONTRACT_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::domain {

// The section names, in contract order.
inline constexpr std::string_view kContractSections[] = {"SUMMARY", "EVIDENCE", "CHANGES", "RISKS",
                                                         "BLOCKERS"};

struct WorkerContract {
  std::map<std::string, std::string> sections;  // upper-case name -> trimmed text
  std::vector<std::string> missing;             // section names absent, contract order
  std::vector<std::string> changed_files;       // relative paths listed under CHANGES
  std::string status;                           // "PASS" | "FAIL" | "BLOCKED" | ""
  bool ok() const { return missing.empty(); }
};

WorkerContract ParseWorkerContract(std::string_view text);

// {"sections": {...}, "missing": [...], "changed_files": [...], "status": "...", "ok": bool}.
nlohmann::json ContractToJson(const WorkerContract& contract);

}  // namespace conclave::domain

#endif  // CONCLAVE_DOMAIN_WORKER_CONTRACT_H_
