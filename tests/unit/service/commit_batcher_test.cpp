// Unit tests: CommitBatcher tells its HealthReporter (the gRPC health service) when it starts
// refusing writes after a failed COMMIT — once — and refuses every later write.
#include "service/commit_batcher.h"

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <filesystem>

#include "common/health_reporter.h"
#include "store/database.h"

using namespace conclave;

namespace {

struct Recorder : HealthReporter {
  std::vector<std::string> reasons;
  void ReportNotServing(const std::string& reason) override { reasons.push_back(reason); }
};

}  // namespace

TEST_CASE("a failed COMMIT reports NOT_SERVING once, and later writes are refused",
          "[service][health]") {
  char t[] = "/tmp/cvuXXXXXX";
  std::string dir = mkdtemp(t);
  {
    store::Database db(dir + "/t.db", store::Database::Options{});
    // A deferred foreign key is checked at COMMIT: the one way to make COMMIT itself fail here.
    db.Exec(
        "CREATE TABLE p(id INTEGER PRIMARY KEY);"
        "CREATE TABLE c(pid INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED);");
    boost::asio::io_context io;
    service::CommitBatcher batcher(io, db, [](const auto&) {});
    Recorder health;
    batcher.set_health_reporter(&health);

    REQUIRE(batcher
                .Write([&] {
                  db.Exec("INSERT INTO p VALUES (1); INSERT INTO c VALUES (1)");  // fine
                  return Status::Ok();
                })
                .ok());
    batcher.Flush();
    CHECK_FALSE(batcher.broken());
    CHECK(health.reasons.empty());  // a good commit says nothing

    REQUIRE(batcher
                .Write([&] {
                  db.Exec("INSERT INTO c VALUES (42)");  // no p(42): COMMIT will fail
                  return Status::Ok();
                })
                .ok());
    bool acked = true;
    batcher.AfterCommit([&](bool ok) { acked = ok; });
    batcher.Flush();
    CHECK_FALSE(acked);
    CHECK(batcher.broken());
    REQUIRE(health.reasons.size() == 1);
    CHECK(health.reasons[0].find("refuses writes") != std::string::npos);
    CHECK(health.reasons[0].find("FOREIGN KEY") != std::string::npos);

    Status again = batcher.Write([] { return Status::Ok(); });
    CHECK(again.code() == Code::kUnavailable);
    CHECK(again.message().find("refusing writes") != std::string::npos);
    CHECK(health.reasons.size() == 1);  // told once
  }
  std::filesystem::remove_all(dir);
}
