// Unit tests: address resolution (handles and group addresses) against a real store.
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <unistd.h>

#include "service/core.h"
#include "service/messaging_service.h"
#include "store/migrations.h"

using namespace conclave;

TEST_CASE("addresses resolve to handles; groups to their members; unknown is NOT_FOUND",
          "[address]") {
  char t[] = "/tmp/cvaXXXXXX";
  std::string dir = mkdtemp(t);
  {
    store::Database db(dir + "/a.db", {});
    REQUIRE(store::ApplyMigrations(db, store::EmbeddedMigrations()).ok());
    boost::asio::io_context io;
    config::Config cfg;
    service::Core core(io, cfg, db);
    exec::Profile pa, pb;
    pa.name = "pa";
    pa.family = "fa";
    pb.name = "pb";
    pb.family = "fb";
    core.profiles.profiles = {pa, pb};
    core.handles.Insert({"coordinator", "coordinator", 1, false});
    core.handles.Insert({"alice", "handle", 1, false});
    core.handles.Insert({"gone", "handle", 1, true});
    for (auto [h, p, cwd, state] : std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
             {"t1", "pa", "/w/one", "idle"}, {"t2", "pb", "/w/two", "busy"},
             {"t3", "pa", "/w/two", "idle"}}) {
      core.handles.Insert({h, "terminal", 1, false});
      core.terminals.Insert({h, p, cwd, state, 0, 1});
    }
    service::MessagingService m(core);
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
  std::filesystem::remove_all(dir);
}
