// Integration: what `conclave status` reports about the daemon process itself.
#include <catch2/catch.hpp>

#include "daemon_fixture.h"

using conclave::testing::DaemonFixture;

namespace {

// A started daemon's status: the JSON form's `field`, after checking the text form shows the
// same value on its `label` line.
std::string StatusLine(const std::string& field, const std::string& label) {
  DaemonFixture d;
  d.Start();
  const auto status = d.CliJson({"status"});
  UNSCOPED_INFO(status.dump());  // also for the caller's checks
  const std::string value = status.value(field, "");
  const auto text = d.Cli({"status"});
  INFO(text.out);
  CHECK(text.out.find(label + value + "\n") != std::string::npos);
  return value;
}

}  // namespace

TEST_CASE("status names the heap the running daemon allocates from", "[status]") {
  const std::string heap = StatusLine("allocator", "heap       ");
#ifdef CONCLAVE_MIMALLOC
  // The daemon's own probe: a block its malloc returned lies in mimalloc's heap. A link order
  // that let libc's malloc win reads "libc (mimalloc linked but not in use)".
  CHECK(heap.rfind("mimalloc 2.", 0) == 0);
#else
  CHECK(heap == "libc");
#endif
}

TEST_CASE("status names the SQLite the running daemon's store runs on", "[status]") {
  const std::string sqlite = StatusLine("sqlite", "sqlite     ");
#ifdef CONCLAVE_BUNDLED_SQLITE
  // The version the daemon's own SQLite reports: a system libsqlite3 loaded in its place at
  // run time would name its own.
  CHECK(sqlite == std::string(CONCLAVE_SQLITE_VERSION) + " (bundled)");
#else
  CHECK(sqlite.find(" (system)") != std::string::npos);
#endif
}
