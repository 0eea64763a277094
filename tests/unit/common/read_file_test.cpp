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

}  // namespace
}  // namespace conclave
