// ProcActivityProbe against real processes: a child's I/O and CPU count toward its parent's
// tree; a pid that does not exist is unknown, not idle.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "exec/activity_probe.h"

namespace conclave::exec {
namespace {

TEST_CASE("the activity probe sums the work of a process's descendants", "[exec][liveness]") {
  ProcActivityProbe probe;
  auto before = probe.Sample({getpid()});
  REQUIRE(before.size() == 1);
  REQUIRE(before[0].known);
  int done[2], hold[2];
  REQUIRE(pipe(done) == 0);
  REQUIRE(pipe(hold) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int null = open("/dev/null", O_WRONLY);
    std::string block(65536, 'x');
    for (int i = 0; i < 32; ++i) {
      if (write(null, block.data(), block.size()) < 0) _exit(1);
    }
    volatile unsigned long spin = 0;
    for (unsigned long i = 0; i < 100000000UL; ++i) spin = spin + i;
    char c = 'k';
    if (write(done[1], &c, 1) != 1) _exit(1);
    if (read(hold[0], &c, 1) < 0) _exit(1);  // stays in the tree until told
    _exit(0);
  }
  char c;
  REQUIRE(read(done[0], &c, 1) == 1);  // the child did its work and is still alive
  auto after = probe.Sample({getpid()});
  REQUIRE(after[0].known);
  CHECK(after[0].processes > before[0].processes);
  CHECK(after[0].io_bytes - before[0].io_bytes >= 32 * 65536);
  CHECK(after[0].cpu_ms > before[0].cpu_ms);
  REQUIRE(write(hold[1], &c, 1) == 1);
  waitpid(child, nullptr, 0);
  for (int fd : {done[0], done[1], hold[0], hold[1]}) close(fd);
}

TEST_CASE("a process the probe cannot read is unknown, never idle", "[exec][liveness]") {
  ProcActivityProbe probe;
  auto got = probe.Sample({0x3ffffffe});  // above any pid_max
  REQUIRE(got.size() == 1);
  CHECK_FALSE(got[0].known);
}

}  // namespace
}  // namespace conclave::exec
