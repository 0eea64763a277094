// No re-rolls (issue 12 item 3): the open foreign findings of a revision are carried into the
// next one. Each round of the new revision is shown them and answers each by its full id
// (finding_ids.h) with a stance. A carried finding closes only when the latest answer from
// its OWN family is withdraw or fixed; anything else — silence, still_present, agree, a rebut
// or a "fixed" from another family — leaves it open, with its recorded severity, so a foreign
// BLOCKER cannot vanish because a re-run reviewer did not repeat itself.
// Also the stored form of a reconciled finding (a review's findings and its carried list).
// Pure, thread-compatible.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "domain/findings.h"
#include "domain/reconcile.h"

namespace conclave::domain {

struct CarriedAnswer {
  std::string family;  // the answering reviewer's family
  Finding entry;       // its id is a carried finding's id
};

// Moves the entries of one round that answer a carried id into *answers (tagged with the
// round's family); returns the rest, which belong to the new revision's own debate.
std::vector<Finding> TakeCarriedAnswers(const std::vector<Finding>& findings,
                                        const std::string& family,
                                        const std::set<std::string>& carried_ids,
                                        std::vector<CarriedAnswer>* answers);

// The carried findings after the answers (in round order): closed only by their own family's
// latest withdraw or fixed; every answer is listed in `answers` as "<family>:<stance>".
std::vector<ReconciledFinding> ApplyCarriedAnswers(std::vector<ReconciledFinding> carried,
                                                   const std::vector<CarriedAnswer>& answers);

// What the next revision carries: the open entries raised by a family foreign to the writer.
std::vector<ReconciledFinding> OpenForeign(const std::vector<ReconciledFinding>& findings);
std::set<std::string> IdsOf(const std::vector<ReconciledFinding>& findings);

// Stored form: FindingToJson plus family, round, foreign, disposition, open, profile, role,
// revision, carried, answers. FromJson returns nullopt for an entry that does not parse.
nlohmann::json ReconciledToJson(const ReconciledFinding& f);
std::optional<ReconciledFinding> ReconciledFromJson(const nlohmann::json& j);
nlohmann::json ReconciledListToJson(const std::vector<ReconciledFinding>& list);
std::vector<ReconciledFinding> ReconciledListFromText(const std::string& text);

}  // namespace conclave::domain
