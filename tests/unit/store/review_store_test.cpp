// Unit test: the reviews still running (what a starting daemon resumes) are read from an index
// that holds only them, not by reading every review with its artifact.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "store/review_store.h"
#include "temp_db.h"

using namespace conclave;
using conclave::testing::TempDb;

namespace {

int64_t AddReview(store::ReviewStore& reviews, const std::string& key, domain::ReviewStatus s) {
  domain::Review r;
  r.mode = "ordinary";
  r.writer_family = "anthropic";
  r.artifact_kind = "diff";
  r.artifact = std::string(2000, 'd');  // a diff: the rows are not small
  r.artifact_sha = "sha";
  r.status = s;
  r.coordinator = "coordinator";
  r.idem_key = key;
  return reviews.Insert(r);
}

std::vector<int64_t> Ids(const std::vector<domain::Review>& rs) {
  std::vector<int64_t> out;
  for (const auto& r : rs) out.push_back(r.id);
  return out;
}

}  // namespace

TEST_CASE("the running reviews are read from their own index, without the finished ones",
          "[store][reviews]") {
  TempDb t(true);
  store::ReviewStore reviews(*t.db);
  t.db->Begin();
  const int64_t first = AddReview(reviews, "first", domain::ReviewStatus::kRunning);
  for (int i = 0; i < 2000; ++i) {
    AddReview(reviews, "done" + std::to_string(i), domain::ReviewStatus::kDone);
  }
  const int64_t last = AddReview(reviews, "last", domain::ReviewStatus::kRunning);
  t.db->Commit();

  reviews.Running();  // compiled: the fetches below are the read's own
  int64_t before = t.db->PageFetches();
  auto running = reviews.Running();
  int64_t fetches = t.db->PageFetches() - before;
  CHECK(Ids(running) == std::vector<int64_t>{first, last});  // oldest first
  CHECK(running[0].artifact.size() == 2000);                  // whole records
  CAPTURE(fetches);
  // 29 here: two rows and their artifacts' overflow pages. Reading every review to keep the
  // running ones fetched 22,275.
  CHECK(fetches <= 40);

  // Finished, a review leaves the index; started, it enters it.
  auto r = *reviews.Get(first);
  r.status = domain::ReviewStatus::kDone;
  reviews.Update(r);
  const int64_t newest = AddReview(reviews, "newest", domain::ReviewStatus::kRunning);
  CHECK(Ids(reviews.Running()) == std::vector<int64_t>{last, newest});
}
