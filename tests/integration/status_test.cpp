// Integration: what `conclave status` reports about the daemon process itself.
#include <catch2/catch.hpp>

#include "daemon_fixture.h"

using conclave::testing::DaemonFixture;

TEST_CASE("status names the heap the running daemon allocates from", "[status]") {
  DaemonFixture d;
  d.Start();
  const auto status = d.CliJson({"status"});
  INFO(status.dump());
  const std::string heap = status.value("allocator", "");
#ifdef CONCLAVE_MIMALLOC
  // The daemon's own probe: a block its malloc returned lies in mimalloc's heap. A link order
  // that let libc's malloc win reads "libc (mimalloc linked but not in use)".
  CHECK(heap.rfind("mimalloc 2.", 0) == 0);
#else
  CHECK(heap == "libc");
#endif
  // The text form shows it too.
  const auto text = d.Cli({"status"});
  CHECK(text.out.find("heap       " + heap + "\n") != std::string::npos);
}

TEST_CASE("status names the SQLite the running daemon's store runs on", "[status]") {
  DaemonFixture d;
  d.Start();
  const auto status = d.CliJson({"status"});
  INFO(status.dump());
  const std::string sqlite = status.value("sqlite", "");
#ifdef CONCLAVE_BUNDLED_SQLITE
  // The version the daemon's own SQLite reports: a system libsqlite3 loaded in its place at
  // run time would name its own.
  CHECK(sqlite == "3.53.2 (bundled)");
#else
  CHECK(sqlite.find(" (system)") != std::string::npos);
#endif
  const auto text = d.Cli({"status"});
  CHECK(text.out.find("sqlite     " + sqlite + "\n") != std::string::npos);
}
