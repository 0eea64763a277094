#include "common/random.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <thread>

using conclave::RandomHex;

TEST_CASE("random hex has the length asked and ids drawn from the pool never repeat", "[random]") {
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
  // On a thread of its own, whose pool starts empty: the first draw fills it, so 506 bytes the
  // parent has not used are in it when it forks, whatever other tests drew before.
  std::string parent, child;
  int status = -1;
  std::thread([&] {
    RandomHex(3);
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_t pid = fork();
    if (pid == 0) {
      std::string mine = RandomHex(16);
      ssize_t n = write(fds[1], mine.data(), mine.size());
      _exit(n == static_cast<ssize_t>(mine.size()) ? 0 : 1);
    }
    close(fds[1]);
    if (pid < 0) return;
    parent = RandomHex(16);
    char buf[32];
    size_t got = 0;
    while (got < sizeof buf) {
      ssize_t n = read(fds[0], buf + got, sizeof buf - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    close(fds[0]);
    child.assign(buf, got);
    if (waitpid(pid, &status, 0) != pid) status = -1;
  }).join();
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(child.size() == 32);
  REQUIRE(parent.size() == 32);
  CHECK(child != parent);
}
