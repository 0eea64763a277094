// Unit tests: address resolution — handles and group addresses (service/messaging_service).
#include <catch2/catch.hpp>
#include <set>

#include "service_harness.h"

namespace conclave {
namespace {

TEST_CASE("addresses resolve to handles — groups to their members — unknown is NOT_FOUND",
          "[service][address]") {
  testing::ServiceHarness h;
  h.AddProfile("pa", "fa");
  h.AddProfile("pb", "fb");
  auto& core = *h.core;
  core.handles.Insert({"alice", "handle", 1, false});
  core.handles.Insert({"gone", "handle", 1, true});
  using S = domain::TerminalState;
  for (auto [handle, p, cwd, state] : std::vector<std::tuple<std::string, std::string, std::string, S>>{
           {"t1", "pa", "/w/one", S::kIdle}, {"t2", "pb", "/w/two", S::kBusy},
           {"t3", "pa", "/w/two", S::kIdle}}) {
    core.handles.Insert({handle, "terminal", 1, false});
    core.terminals.Insert({handle, p, cwd, state, 0, 1});
  }
  auto& m = h.services->messaging;
  auto set = [&](const std::string& addr, const std::string& sender = "") {
    auto r = m.ResolveAddress(addr, sender);
    REQUIRE(r.ok());
    return std::set<std::string>(r->begin(), r->end());
  };
  CHECK(set("alice") == std::set<std::string>{"alice"});
  CHECK(set("@all", "alice") == std::set<std::string>{"coordinator", "t1", "t2", "t3"});
  CHECK(set("@idle") == std::set<std::string>{"t1", "t3"});
  CHECK(set("@family:fa") == std::set<std::string>{"t1", "t3"});
  CHECK(set("@profile:pb") == std::set<std::string>{"t2"});
  CHECK(set("@worktree:/w/two/") == std::set<std::string>{"t2", "t3"});
  CHECK(m.ResolveAddress("nobody", "").status().code() == Code::kNotFound);
  CHECK(m.ResolveAddress("gone", "").status().code() == Code::kNotFound);
  CHECK(m.ResolveAddress("@family:zz", "").status().code() == Code::kNotFound);
  CHECK(m.ResolveAddress("@bogus", "").status().code() == Code::kInvalidArgument);
  CHECK(m.ResolveAddress("", "").status().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace conclave
