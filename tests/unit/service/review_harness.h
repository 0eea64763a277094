// ReviewHarness: a ServiceHarness with three reviewer profiles — prim (anthropic), chal
// (openai), third (deepseek) — for service-level review tests: start a review, answer the
// running rounds as a reviewer would, end a run as a timeout, read the review back.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "service_harness.h"

namespace conclave::testing {

struct ReviewHarness : ServiceHarness {
  explicit ReviewHarness(std::function<void(config::Config&)> configure = nullptr)
      : ServiceHarness(configure) {
    for (auto [name, family] : {std::pair{"prim", "anthropic"}, std::pair{"chal", "openai"},
                                std::pair{"third", "deepseek"}}) {
      AddProfile(name, family, 4);
    }
  }

  exec::Profile& Profile(const std::string& name) {
    for (auto& p : core->profiles.profiles) {
      if (p.name == name) return p;
    }
    throw std::runtime_error("no profile " + name);
  }

  StatusOr<service::ReviewView> Start(service::StartReviewInput in) {
    if (in.writer_family.empty()) in.writer_family = "anthropic";
    if (in.artifact.empty()) in.artifact = "diff --git a/a b/a\n+x\n";
    std::optional<StatusOr<service::ReviewView>> out;
    services->reviews.Start(in, [&](StatusOr<service::ReviewView> v) { out = std::move(v); });
    RunUntil([&] { return out.has_value(); });
    return out.value_or(Internal("no answer"));
  }

  StatusOr<service::ReviewView> Regate(int64_t id, service::RegateInput in) {
    std::optional<StatusOr<service::ReviewView>> out;
    services->reviews.Regate(id, in, [&](StatusOr<service::ReviewView> v) { out = std::move(v); });
    RunUntil([&] { return out.has_value(); });
    return out.value_or(Internal("no answer"));
  }

  domain::Review Review(int64_t id) { return services->reviews.Get(id)->review; }

  // The oldest running run, once one is running.
  FakeLauncher::Started* NextRun() {
    if (!RunUntil([&] { return !launcher.Running().empty(); })) return nullptr;
    return launcher.Running().front();
  }
  // The task brief's round header says which reviewer a run is.
  static std::string Brief(FakeLauncher::Started* l) { return l->plan.stdin_data; }

  // Answers the oldest running round with these findings (a JSON array).
  void Answer(const std::string& findings_array) {
    auto* l = NextRun();
    REQUIRE(l);
    launcher.Finish(l, "notes\n```json\n{\"findings\": " + findings_array + "}\n```\n", 0);
  }
  // Ends the oldest running run as its hard timeout would.
  void TimeOut() {
    auto* l = NextRun();
    REQUIRE(l);
    exec::RunOutcome o;
    o.hard_timeout = true;
    o.exit_code = -1;
    o.term_signal = 9;
    l->run->finished_ = true;
    l->cb.on_finished(o);
  }
  bool Done(int64_t id) {
    return RunUntil([&] { return Review(id).status == domain::ReviewStatus::kDone; });
  }
};

inline std::string Finding(const std::string& id, const std::string& severity,
                           const std::string& stance, const std::string& category = "security") {
  return nlohmann::json({{"id", id}, {"severity", severity}, {"category", category},
                         {"location", {{"path", "src/a.cpp"}, {"line", 3}}}, {"title", id},
                         {"detail", "d"}, {"stance", stance}, {"refs", nlohmann::json::array()}})
      .dump();
}

}  // namespace conclave::testing
