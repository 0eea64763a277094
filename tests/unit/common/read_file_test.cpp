// Unit tests: common/read_file — a file someone else may have planted is read only when it is a
// regular file: a FIFO, a device, a directory or a link (when asked) reads as nothing, and
// never blocks or reads without end.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/read_file.h"
#include "in_child.h"

namespace conclave {
namespace {
namespace fs = std::filesystem;
using testing::InChild;

struct Scratch {
  Scratch() {
    char t[] = "/tmp/cvrfXXXXXX";
    dir = mkdtemp(t);
  }
  ~Scratch() { fs::remove_all(dir); }
  std::string dir;
};

TEST_CASE("a planted file is read only when it is a regular file, up to its limit",
          "[common][read_file]") {
  Scratch s;
  const std::string regular = s.dir + "/HEAD", fifo = s.dir + "/fifo", link = s.dir + "/link";
  std::ofstream(regular) << "ref: refs/heads/main \r\nsecond line\n";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  REQUIRE(symlink(regular.c_str(), link.c_str()) == 0);

  std::string line;
  REQUIRE(ReadFirstLine(regular.c_str(), &line));
  CHECK(line == "ref: refs/heads/main");
  std::string text;
  REQUIRE(ReadRegularFile(regular.c_str(), &text, 5));
  CHECK(text == "ref: ");
  // A link to a regular file is followed unless the caller says not to.
  text.clear();
  CHECK(ReadRegularFile(link.c_str(), &text, 100));
  CHECK(text.rfind("ref: ", 0) == 0);
  text.clear();
  CHECK_FALSE(ReadRegularFile(link.c_str(), &text, 100, O_NOFOLLOW));
  CHECK(text.empty());
  CHECK_FALSE(ReadFirstLine((s.dir + "/missing").c_str(), &line));
  CHECK_FALSE(ReadFirstLine(s.dir.c_str(), &line));

  // Opened blocking, a FIFO without a writer waits forever; /dev/zero never ends. In a child,
  // so a reader that does either fails this check instead of hanging the run.
  CHECK(InChild([&] {
    std::string l;
    return !ReadFirstLine(fifo.c_str(), &l) && l.empty();
  }));
  CHECK(InChild([&] {
    std::string t;
    return !ReadRegularFile("/dev/zero", &t, SIZE_MAX) && t.empty();
  }));
  CHECK(InChild([&] {
    std::string l;
    return !ReadFirstLine("/dev/zero", &l, SIZE_MAX);
  }));
}

TEST_CASE("a first line longer than its limit is refused, a failed read appends nothing, and a "
          "file beneath a directory is reached through no link",
          "[common][read_file]") {
  Scratch s;
  const std::string f = s.dir + "/ref";
  std::ofstream(f) << std::string(10, 'a') << "\n";
  std::string line = "kept";
  CHECK(ReadFirstLine(f.c_str(), &line, 10));
  CHECK(line == std::string(10, 'a'));
  std::ofstream(f) << std::string(11, 'a');
  line = "kept";
  CHECK_FALSE(ReadFirstLine(f.c_str(), &line, 10));
  CHECK(line == "kept");
  std::string out = "before";
  CHECK_FALSE(ReadRegularFile(s.dir.c_str(), &out, 100));  // a directory
  CHECK(out == "before");

  fs::create_directories(s.dir + "/git/refs");
  fs::create_directories(s.dir + "/outside");
  std::ofstream(s.dir + "/git/refs/main") << "inside\n";
  std::ofstream(s.dir + "/outside/main") << "outside\n";
  fs::create_directory_symlink(s.dir + "/outside", s.dir + "/git/refs/linked");
  fs::create_symlink(s.dir + "/outside/main", s.dir + "/git/refs/file-link");
  CHECK(ReadFirstLineBeneath(s.dir + "/git", "refs/main", &line));
  CHECK(line == "inside");
  CHECK_FALSE(ReadFirstLineBeneath(s.dir + "/git", "refs/linked/main", &line));
  CHECK_FALSE(ReadFirstLineBeneath(s.dir + "/git", "refs/file-link", &line));
  CHECK_FALSE(ReadFirstLineBeneath(s.dir + "/git", "../outside/main", &line));
  CHECK_FALSE(ReadFirstLineBeneath(s.dir + "/git", s.dir + "/outside/main", &line));
  fs::create_directory_symlink(s.dir + "/git", s.dir + "/git-link");
  CHECK_FALSE(ReadFirstLineBeneath(s.dir + "/git-link", "refs/main", &line));
  CHECK(line == "inside");

  // The way taken where openat2 is missing or refused keeps the same rules.
  int dfd = open((s.dir + "/git").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(dfd >= 0);
  auto opens = [&](const std::string& rel) {
    int fd = OpenBeneathByWalk(dfd, rel);
    if (fd >= 0) close(fd);
    return fd >= 0;
  };
  CHECK(opens("refs/main"));
  for (const char* rel : {"refs/linked/main", "refs/file-link", "../outside/main", "refs/../refs/main",
                          "./refs/main", "refs//main", "", "/etc/hostname"}) {
    INFO(rel);
    CHECK_FALSE(opens(rel));
  }
  close(dfd);
}

}  // namespace
}  // namespace conclave
