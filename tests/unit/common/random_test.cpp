#include "common/random.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <set>
#include <string>

using conclave::RandomHex;

TEST_CASE("random hex has the length asked, and ids drawn from the pool never repeat", "[random]") {
  CHECK(RandomHex(0).empty());
  CHECK(RandomHex(300).size() == 600);  // more than one 64-byte chunk
  std::set<std::string> seen;
  for (int i = 0; i < 20000; ++i) {  // ~235 refills of the 512-byte pool
    std::string id = RandomHex(6);
    REQUIRE(id.size() == 12);
    REQUIRE(id.find_first_not_of("0123456789abcdef") == std::string::npos);
    seen.insert(id);
  }
  CHECK(seen.size() == 20000);
}

TEST_CASE("a forked child does not draw the bytes its parent draws next", "[random]") {
  RandomHex(6);  // the pool now holds bytes the parent has not used
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::string mine = RandomHex(16);
    ssize_t n = write(fds[1], mine.data(), mine.size());
    _exit(n == static_cast<ssize_t>(mine.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string parent = RandomHex(16);
  char buf[32];
  size_t got = 0;
  while (got < sizeof buf) {
    ssize_t n = read(fds[0], buf + got, sizeof buf - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(got == sizeof buf);
  CHECK(std::string(buf, got) != parent);
}
