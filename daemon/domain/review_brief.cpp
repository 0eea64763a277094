#include "domain/review_brief.h"

#include <nlohmann/json.hpp>

namespace conclave::domain {

std::string BuildRoundBrief(const Review& r, int round, const std::string& role,
                            const std::vector<ReviewRound>& prior) {
  std::string b;
  b += "ROLE: reviewer (" + role + ")\n";
  b += "REVIEW-ID: " + std::to_string(r.id) + "\nREVIEW-REVISION: " + std::to_string(r.revision) +
       "\nREVIEW-ROUND: " + std::to_string(round) + "\nREVIEW-ROLE: " + role + "\n";
  b += "WRITER-FAMILY: " + r.writer_family + "\nARTIFACT-KIND: " + r.artifact_kind + "\n\nTASK:\n";
  if (role == "challenger") {
    b += "You are a foreign-family challenger in an adversarial review. Below are the findings "
         "of the earlier rounds. Find what the primary reviewer missed or got wrong. For each "
         "earlier finding, agree (repeat its id with stance \"agree\"), or rebut it (same id, "
         "stance \"rebut\", say why) — do not simply validate. Report your own new findings "
         "with stance \"new\". If you raised a finding earlier and now accept it was wrong, "
         "repeat its id with stance \"withdraw\".\n";
  } else if (role == "primary" && round > 0) {
    b += "You are the same-source primary reviewer. A foreign-family challenger answered your "
         "review; respond to each of its findings: agree (concede, same id, stance \"agree\"), "
         "rebut with reasons (same id, stance \"rebut\"), or withdraw one of your own findings "
         "(its id, stance \"withdraw\"). Add new findings with stance \"new\".\n";
  } else {
    b += "Review the artifact below for correctness, security, performance, maintainability "
         "and docs. Report every defect you find.\n";
  }
  if (!prior.empty()) {
    b += "\nEARLIER ROUNDS (JSON):\n";
    for (const auto& p : prior) {
      nlohmann::json j = {{"round", p.round}, {"role", p.role}, {"family", p.family},
                          {"findings", nlohmann::json::parse(p.findings, nullptr, false)}};
      b += j.dump() + "\n";
    }
  }
  b += "\nARTIFACT:\n<<<ARTIFACT\n" + r.artifact + (r.artifact.empty() || r.artifact.back() == '\n' ? "" : "\n") +
       "ARTIFACT>>>\n\n";
  b += "OUTPUT: reply with a fenced ```json block holding {\"findings\": [ {\"id\", \"severity\" "
       "(BLOCKER|HIGH|MAJOR|MEDIUM|LOW|INFO), \"category\" (correctness|security|performance|"
       "maintainability|docs), \"location\": {\"path\", \"line\"}, \"title\", \"detail\", "
       "\"stance\" (new|agree|rebut|withdraw), \"refs\": []} ]}. An empty list means you found "
       "nothing.\n";
  return b;
}

}  // namespace conclave::domain
