// ReviewReport: the Phase-0 measurement (seed 000; issue 12 item 9) — per-profile reliability
// of every dispatch, and the review figures of domain/review_figures.h (which reviews count,
// unique findings by family and severity, incremental value, terminations of debates only,
// rubber-stamp rate, reviewer reliability, cost; every rate with its denominator), per review
// and overall. It reads through the stores it is given, on whichever thread owns their
// connection (ReviewService builds it on SnapshotReader's, off the loop).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/report_store.h"
#include "store/review_store.h"

namespace conclave::service {

struct ProfileFigures {
  std::string profile, family;
  int64_t invocations = 0, clean = 0, timed_out = 0, failed = 0, malformed = 0;
  double cost_usd = 0, clean_rate = 0;
};

struct ReportView {
  std::vector<ProfileFigures> profiles;
  std::map<std::string, int64_t> unique_findings_per_family;
  int64_t reviews = 0;
  std::map<std::string, int64_t> terminations;  // of counted debates only
  nlohmann::json json;                          // the whole report, for `report --json`
};

class ReviewReport {
 public:
  ReviewReport(store::ReportStore& report, store::ReviewStore& reviews)
      : reviews_(reviews), report_(report) {}
  ReportView Build(int64_t since_ms);

 private:
  std::vector<ProfileFigures> Profiles(int64_t since_ms);
  store::ReviewStore& reviews_;
  store::ReportStore& report_;
};

}  // namespace conclave::service
