// ReviewWorkspace: where reviewer rounds run (issue 12 item 7). Each round gets a directory of
// its own under review.workdir (default <state_dir>-reviews: beside the state directory, never
// inside it): <root>/review-<id>/rev<revision>-round<n>/work holds only the artifact (read-only,
// artifact.<diff|txt|md>) and, when the review names a repository, ./repo — a read-only
// `git worktree add --detach` of the reviewed commit; each dispatch's isolated HOME/TMPDIR go
// to <root>/review-<id>/rev<revision>-round<n>/dispatch-<id>, also outside the state directory.
// Preparing and removing the directories and every git command run on the helper pool through
// the CommandRunner, never on the loop; their results come back on the loop.
// PlaceFor (RunPlacement) tells the RunSupervisor where a reviewer task's run executes.
// Loop thread only (the helper jobs touch no loop state).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "service/core.h"
#include "service/ports.h"
#include "service/write_then.h"
#include "store/review_store.h"

namespace conclave::service {

struct RoundDirJob {
  int64_t task_id = 0;
  std::string base;  // the round's directory (see RoundBase)
  std::string artifact_file, artifact;
  std::string repo, commit;  // "" = no repository
};

class ReviewWorkspace : public RunPlacement {
 public:
  ReviewWorkspace(Core& core, store::ReviewStore& store) : core_(core), store_(store) {}

  std::string Root() const;
  std::string RoundBase(int64_t review_id, int revision, int round) const;
  // "artifact.diff" | "artifact.md" (doc, spec) | "artifact.txt".
  static std::string ArtifactFile(const std::string& kind);

  std::optional<RunPlace> PlaceFor(const domain::Task& t, const domain::Dispatch& d) override;

  // Creates the round directories off the loop; done(results) on the loop, one status per job
  // (in job order).
  void Prepare(std::vector<RoundDirJob> jobs, std::function<void(std::vector<Status>)> done);
  // Removes a revision's round directories (and their worktrees) off the loop.
  void Cleanup(int64_t review_id, int revision, const std::string& repo);
  // `git rev-parse --verify <commit>^{commit}` in repo, off the loop: the full sha, or
  // INVALID_ARGUMENT naming the field.
  void ResolveCommit(const std::string& repo, const std::string& commit, Done<std::string> done);

 private:
  Core& core_;
  store::ReviewStore& store_;
  // Creating a round's directories and removing an emptied review-<id> run on different helper
  // threads: without this, a cleanup of revision N can remove review-<id> between a prepare of
  // revision N+1 seeing it and creating rev<N+1>-round0 inside it (ENOENT).
  std::shared_ptr<std::mutex> tree_mu_ = std::make_shared<std::mutex>();
};

}  // namespace conclave::service
