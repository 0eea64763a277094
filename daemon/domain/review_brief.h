// The brief of one reviewer round (DESIGN §1 "Reviews", seed 000; issue 12 item 1), built from
// structured parts — role, instructions, open findings carried from earlier revisions, the
// earlier rounds, where the artifact lies on disk, the artifact, the answer format — so that
// nothing in the artifact can be read as a part of the brief:
//   - the artifact is fenced by lines holding a per-round random nonce
//     (<<<ARTIFACT-<nonce> ... ARTIFACT-<nonce>>>>); FenceArtifact refuses a nonce that occurs
//     in the artifact, so a writer cannot close the fence early;
//   - the parts travel as JSON (the round task's brief is {"review_brief": {...}}) and the
//     renderer (exec/brief_renderer) places them into a profile's template without ever
//     parsing the artifact for sections;
//   - the answer format is generated from the names in findings.h (one definition) and every
//     rendered reviewer brief carries it.
// A reviewer brief carries no writer instructions (no worker contract, no "fix and run tests").
// Pure text assembly, thread-compatible.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "domain/reconcile.h"
#include "domain/review_record.h"

namespace conclave::domain {

struct ReviewBriefParts {
  std::string role;          // "reviewer (challenger)"
  std::string header;        // REVIEW-ID / REVISION / ROUND / ROLE / WRITER-FAMILY / KIND lines
  std::string instructions;  // what this round must do
  std::string carried;       // open findings of earlier revisions to answer ("" = none)
  std::string prior;         // earlier rounds of this revision, one JSON line each ("" = none)
  std::string workspace;     // where the artifact (and the repository) are on disk
  std::string artifact;      // the artifact inside its nonce fence
  std::string answer_format;
  std::string review_mode;   // mechanical | simple | ordinary | strong | debate
};

struct RoundBriefInput {
  const Review* review = nullptr;
  int round = 0;
  std::string role;    // primary | challenger | line
  bool independent = false;  // a measured or parallel line: sees no other round
  std::vector<ReviewRound> prior;          // done rounds of this revision, before this one
  std::vector<ReconciledFinding> carried;  // open foreign findings of earlier revisions
  std::string nonce;
  std::string artifact_file;  // the artifact's file name in the round's directory
  bool with_repo = false;     // the reviewed commit is checked out in ./repo
};

// The findings answer format (generated from findings.h); its first line starts with
// kAnswerFormatMarker.
inline constexpr const char* kAnswerFormatMarker = "ANSWER FORMAT (required)";
std::string AnswerFormat();

// The artifact fenced by the nonce; nullopt when the nonce occurs in the artifact.
std::optional<std::string> FenceArtifact(const std::string& artifact, const std::string& nonce);

// REQUIRES: in.review != nullptr and FenceArtifact(in.review->artifact, in.nonce) succeeds.
ReviewBriefParts BuildRoundBrief(const RoundBriefInput& in);

// header + instructions + carried + prior + workspace + artifact: the "task" of the brief.
std::string BriefTask(const ReviewBriefParts& parts);
// Every part in order, for a profile without a template.
std::string RenderPlainBrief(const ReviewBriefParts& parts);

// The round task's stored brief: {"review_brief": {...}}.
std::string ReviewBriefToText(const ReviewBriefParts& parts);
// Inverse of ReviewBriefToText; nullopt for any other text.
std::optional<ReviewBriefParts> ReviewBriefFromText(const std::string& text);
// The parts of any reviewer task's brief: ReviewBriefFromText, else (a reviewer task made by
// hand) the whole text as the instructions, with the answer format.
ReviewBriefParts ReviewBriefForTask(const std::string& brief);

}  // namespace conclave::domain
