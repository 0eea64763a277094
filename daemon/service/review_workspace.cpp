// Contract: see review_workspace.h.
#include "service/review_workspace.h"
#include "common/loop_kick.h"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <filesystem>
#include <fstream>

namespace conclave::service {
namespace fs = std::filesystem;
namespace {

constexpr int kGitTimeoutMs = 120000;

// The directory exists, is no symlink, is ours and is 0700.
Status OwnDirectory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  struct stat st{};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
    return FailedPrecondition("review workdir " + dir + " is not a directory owned by uid " +
                              std::to_string(geteuid()));
  }
  chmod(dir.c_str(), 0700);
  return Status::Ok();
}

// Adds (writable) or removes (read-only) the write bits under path.
void SetWritable(const std::string& path, bool writable) {
  std::error_code ec;
  auto apply = [&](const fs::path& p) {
    struct stat st{};
    if (lstat(p.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) return;
    mode_t mode = st.st_mode & 07777;
    chmod(p.c_str(), writable ? (mode | S_IWUSR) : (mode & ~(S_IWUSR | S_IWGRP | S_IWOTH)));
  };
  if (writable) apply(path);
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    apply(it->path());
  }
  if (!writable) apply(path);
}

Status PrepareOne(exec::CommandRunner& commands, std::mutex& tree_mu, const std::string& root,
                  const RoundDirJob& job) {
  const std::string work = job.base + "/work";
  {
    std::lock_guard lock(tree_mu);
    if (Status s = OwnDirectory(root); !s.ok()) return s;
    std::error_code ec;
    fs::create_directories(work, ec);
    if (ec) return FailedPrecondition("cannot create " + work + ": " + ec.message());
  }
  const std::string file = work + "/" + job.artifact_file;
  if (!fs::exists(file)) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << job.artifact;
    if (!out) return FailedPrecondition("cannot write " + file);
    out.close();
    chmod(file.c_str(), 0444);
  }
  if (job.repo.empty() || fs::exists(work + "/repo")) return Status::Ok();
  exec::CommandResult r = commands.Run(
      {"git", "-C", job.repo, "worktree", "add", "--detach", work + "/repo", job.commit}, "/",
      kGitTimeoutMs);
  if (r.exit_code != 0) {
    return FailedPrecondition("git worktree add --detach of " + job.repo + " at " + job.commit +
                              " failed (exit " + std::to_string(r.exit_code) + ")");
  }
  // The worktree's .git file links back into the reviewed repository's .git: through it a
  // reviewer with a shell could commit or move refs there. It is replaced by one that leads
  // nowhere (git stops there instead of searching the directories above); the reviewer gets
  // the files only. The worktree's registration goes with `git worktree prune` at cleanup.
  if (fs::exists(work + "/repo/.git")) {
    std::ofstream dotgit(work + "/repo/.git", std::ios::trunc);
    dotgit << "gitdir: /nonexistent/conclave-reviewers-get-no-repository\n";
    if (!dotgit.flush()) {
      return FailedPrecondition("cannot cut " + work + "/repo/.git off the reviewed repository");
    }
  }
  if (fs::exists(work + "/repo")) SetWritable(work + "/repo", false);
  return Status::Ok();
}

}  // namespace

std::string ReviewWorkspace::Root() const {
  if (!core_.config.review.workdir.empty()) return core_.config.review.workdir;
  return core_.config.state_dir + "-reviews";
}

std::string ReviewWorkspace::RoundBase(int64_t review_id, int revision, int round) const {
  return Root() + "/review-" + std::to_string(review_id) + "/rev" + std::to_string(revision) +
         "-round" + std::to_string(round);
}

std::string ReviewWorkspace::ArtifactFile(const std::string& kind) {
  if (kind == "diff") return "artifact.diff";
  if (kind == "doc" || kind == "spec") return "artifact.md";
  return "artifact.txt";
}

std::optional<RunPlace> ReviewWorkspace::PlaceFor(const domain::Task& t, const domain::Dispatch& d) {
  if (t.role != "reviewer") return std::nullopt;
  auto round = store_.RoundForTask(t.id);
  if (!round) return std::nullopt;
  const std::string base = RoundBase(round->review_id, round->revision, round->round);
  return RunPlace{base + "/work", base + "/dispatch-" + std::to_string(d.id)};
}

void ReviewWorkspace::Prepare(std::vector<RoundDirJob> jobs,
                              std::function<void(std::vector<Status>)> done) {
  if (jobs.empty()) return done({});
  auto& commands = core_.commands;
  auto& io = core_.io;
  boost::asio::post(core_.helpers, [&commands, &io, mu = tree_mu_, root = Root(),
                                    jobs = std::move(jobs), done = std::move(done)]() mutable {
    std::vector<Status> results;
    for (const RoundDirJob& job : jobs) {
      try {
        results.push_back(PrepareOne(commands, *mu, root, job));
      } catch (const std::exception& e) {
        results.push_back(Internal(std::string("preparing the round directory: ") + e.what()));
      }
    }
    PostToLoop(io, [results = std::move(results), done = std::move(done)]() mutable {
      done(std::move(results));
    });
  });
}

void ReviewWorkspace::Cleanup(int64_t review_id, int revision, const std::string& repo) {
  std::vector<std::string> bases;
  for (const auto& x : store_.Rounds(review_id)) {
    if (x.revision == revision) bases.push_back(RoundBase(review_id, revision, x.round));
  }
  auto& commands = core_.commands;
  boost::asio::post(core_.helpers, [&commands, mu = tree_mu_, bases, repo] {
    for (const std::string& base : bases) {
      std::error_code ec;
      // The worktree's .git leads nowhere (PrepareOne): removed here, pruned below.
      SetWritable(base, true);
      fs::remove_all(base, ec);
      std::lock_guard lock(*mu);
      fs::remove(fs::path(base).parent_path(), ec);  // review-<id>, once its last round is gone
    }
    if (!repo.empty()) commands.Run({"git", "-C", repo, "worktree", "prune"}, "/", kGitTimeoutMs);
  });
}

void ReviewWorkspace::ResolveCommit(const std::string& repo, const std::string& commit,
                                    Done<std::string> done) {
  auto& commands = core_.commands;
  auto& io = core_.io;
  boost::asio::post(core_.helpers, [&commands, &io, repo, commit, done = std::move(done)]() mutable {
    exec::CommandResult r =
        commands.Run({"git", "-C", repo, "rev-parse", "--verify", "--quiet", commit + "^{commit}"},
                     "/", kGitTimeoutMs);
    std::string sha = r.out.substr(0, r.out.find_first_of("\r\n"));
    StatusOr<std::string> result =
        r.exit_code == 0 && sha.size() >= 40
            ? StatusOr<std::string>(sha)
            : StatusOr<std::string>(InvalidArgument("commit: '" + commit + "' is not a commit in " +
                                                    repo));
    PostToLoop(io, [result = std::move(result), done = std::move(done)]() mutable {
      done(std::move(result));
    });
  });
}

}  // namespace conclave::service
