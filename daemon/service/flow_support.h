// Flow engine support shared by the step files (flow_steps.cpp, flow_review_step.cpp): the
// off-loop runner and small JSON helpers. Loop thread only (OffLoop's work runs on the helper
// pool and must touch nothing the loop owns).
#pragma once

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/utf8.h"
#include "common/loop_kick.h"
#include "service/flow_service.h"

namespace conclave::service {
namespace flow_support {

inline std::vector<std::string> Strings(const std::string& json_array) {
  std::vector<std::string> out;
  auto j = nlohmann::json::parse(json_array, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& x : j) {
    if (x.is_string()) out.push_back(x.get<std::string>());
  }
  return out;
}

// A flow's own terminals (domain::FlowOfTerminal reads the id back).
inline std::string WriterTerminal(int64_t id) { return "flow-" + std::to_string(id) + "-writer"; }
inline std::string VerifyTerminal(int64_t id) { return "flow-" + std::to_string(id) + "-verify"; }

inline std::string Tail(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  return "[...]\n" + ValidUtf8(s.substr(s.size() - n));
}

}  // namespace flow_support

// Runs work on the helper pool, then `then` on the loop; the flow is busy meanwhile (an
// Advance in between is replayed after `then`).
template <typename T>
void FlowService::OffLoop(int64_t id, std::function<T()> work, std::function<void(T)> then) {
  busy_.insert(id);
  boost::asio::post(core_.helpers, [this, id, work = std::move(work), then = std::move(then)] {
    T r = work();
    PostToLoop(core_.io, [this, id, r = std::move(r), then] {
      busy_.erase(id);
      then(r);
      if (again_.erase(id)) Advance(id);
    });
  });
}

}  // namespace conclave::service
