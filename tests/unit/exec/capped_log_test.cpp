// Unit tests: exec/capped_log — a dispatch log's size on disk is bounded (head + tail), and
// stitching puts the kept tail back behind the head with a marker naming what was cut.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "exec/capped_log.h"
#include "in_child.h"

namespace conclave::exec {
namespace {
namespace fs = std::filesystem;

// A fresh directory, removed afterwards.
struct Scratch {
  Scratch() {
    char t[] = "/tmp/cvcapXXXXXX";
    dir = mkdtemp(t);
  }
  ~Scratch() { fs::remove_all(dir); }
  const std::string& path() const { return dir; }
  std::string dir;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Distinct, position-dependent bytes: a misplaced chunk cannot compare equal.
std::string Numbered(size_t bytes) {
  std::string s;
  for (size_t i = 0; s.size() < bytes; ++i) s += std::to_string(i) + "\n";
  s.resize(bytes);
  return s;
}

// Writes `text` through a CappedLog in pseudo-random chunks (1 B .. 9 KiB).
void WriteChunked(CappedLog& log, const std::string& text, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> len(1, 9000);
  for (size_t at = 0; at < text.size();) {
    size_t n = std::min(len(rng), text.size() - at);
    log.Append(std::string_view(text).substr(at, n));
    at += n;
  }
}

size_t Segments(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    n += e.path().filename().string().find(".tail.") != std::string::npos;
  }
  return n;
}

TEST_CASE("capped log: past the cap only the head and the last quarter-caps are stored",
          "[exec][capped_log]") {
  Scratch dir;
  const std::string path = dir.path() + "/transcript.log";
  const int64_t cap = 16384;
  const std::string text = Numbered(200'000);
  for (unsigned seed : {1u, 2u, 3u}) {
    INFO("seed " << seed);
    fs::remove(path);
    CappedLog log;
    REQUIRE(log.Open(path, cap));
    WriteChunked(log, text, seed);
    log.Close();
    CHECK(log.total_bytes() == static_cast<int64_t>(text.size()));
    // Before the stitch the file holds the head only; at most two segments are on disk.
    CHECK(fs::file_size(path) == static_cast<uintmax_t>(cap / 2));
    CHECK(Segments(dir.path()) == 2);
    REQUIRE(StitchCappedLog(path, cap).ok());
    CHECK(Segments(dir.path()) == 0);
    std::string stored = Slurp(path);
    CHECK(stored.size() < static_cast<size_t>(cap) + 200);
    CHECK(stored.compare(0, cap / 2, text, 0, cap / 2) == 0);
    size_t marker = stored.find("\n[conclave: ");
    REQUIRE(marker == static_cast<size_t>(cap / 2));
    size_t marker_end = stored.find(")]\n", marker) + 3;
    std::string tail = stored.substr(marker_end);
    CHECK(tail.size() >= static_cast<size_t>(cap / 4));
    CHECK(text.compare(text.size() - tail.size(), tail.size(), tail) == 0);
    size_t cut = text.size() - cap / 2 - tail.size();
    CHECK(stored.find("[conclave: " + std::to_string(cut) + " bytes of output cut here") ==
          marker + 1);
    // Stitching again changes nothing.
    REQUIRE(StitchCappedLog(path, cap).ok());
    CHECK(Slurp(path) == stored);
  }
}

TEST_CASE("capped log: output under the cap is stored whole, without a marker",
          "[exec][capped_log]") {
  Scratch dir;
  const std::string path = dir.path() + "/stdout.log";
  const int64_t cap = 16384;
  // Under the head; past the head but within one segment; within two segments.
  for (size_t size : {size_t{5000}, size_t{10000}, size_t{15000}}) {
    INFO(size << " bytes");
    fs::remove(path);
    const std::string text = Numbered(size);
    CappedLog log;
    REQUIRE(log.Open(path, cap));
    WriteChunked(log, text, 7);
    log.Close();
    REQUIRE(StitchCappedLog(path, cap).ok());
    CHECK(Slurp(path) == text);
    CHECK(Segments(dir.path()) == 0);
  }
}

TEST_CASE("capped log: cap 0 keeps everything", "[exec][capped_log]") {
  Scratch dir;
  const std::string path = dir.path() + "/t.log";
  const std::string text = Numbered(300'000);
  CappedLog log;
  REQUIRE(log.Open(path, 0));
  WriteChunked(log, text, 9);
  log.Close();
  REQUIRE(StitchCappedLog(path, 0).ok());
  CHECK(Slurp(path) == text);
}

}  // namespace
}  // namespace conclave::exec

namespace conclave::exec {
namespace {

// A sandboxed worker can create files in its dispatch directory, though not the logs
// themselves: a link named like a tail segment would fold a file hidden from it into its own
// output, a FIFO would stall the helper thread (or recovery) that stitches.
TEST_CASE("capped log: a planted link or FIFO named like a tail segment is removed, never read",
          "[exec][capped_log]") {
  Scratch dir;
  const std::string path = dir.path() + "/stdout.log";
  const std::string secret = dir.path() + "/hidden-secret";
  std::ofstream(secret) << "SECRET-MARKER\n";
  std::ofstream(path) << "head\n";
  fs::create_symlink(secret, TailSegmentPath(path, 1));
  std::ofstream(TailSegmentPath(path, 2)) << "kept tail\n";
  CHECK(testing::InChild([&] { return StitchCappedLog(path, 16384).ok(); }));
  std::string stored = Slurp(path);
  CHECK(stored.find("SECRET-MARKER") == std::string::npos);
  CHECK(stored.rfind("head\n", 0) == 0);
  CHECK(stored.find("kept tail\n") != std::string::npos);
  CHECK(Segments(dir.path()) == 0);
  CHECK(Slurp(secret) == "SECRET-MARKER\n");  // the link went, not what it named
  REQUIRE(mkfifo(TailSegmentPath(path, 3).c_str(), 0600) == 0);
  std::ofstream(TailSegmentPath(path, 4)) << "later tail\n";
  CHECK(testing::InChild([&] { return StitchCappedLog(path, 16384).ok(); }));
  CHECK(Slurp(path).find("later tail\n") != std::string::npos);
  CHECK(Segments(dir.path()) == 0);
  // The log itself a FIFO or a link: the stitch fails, without waiting or writing through it.
  fs::remove(path);
  REQUIRE(mkfifo(path.c_str(), 0600) == 0);
  std::ofstream(TailSegmentPath(path, 1)) << "tail\n";
  CHECK(testing::InChild([&] { return !StitchCappedLog(path, 16384).ok(); }));
  fs::remove(path);
  fs::create_symlink(secret, path);
  CHECK(testing::InChild([&] { return !StitchCappedLog(path, 16384).ok(); }));
  CHECK(Slurp(secret) == "SECRET-MARKER\n");
}


// Past the link and the FIFO: many segment-named files, one huge (sparse) and one whose number
// times the segment size overflows. Only the two highest numbers are read, each up to a
// segment's size (the last bytes of it); all are removed.
TEST_CASE("capped log: planted segments are bounded — only the last two, a segment's size each",
          "[exec][capped_log]") {
  Scratch dir;
  const std::string path = dir.path() + "/stdout.log";
  const int64_t cap = 16384;
  std::ofstream(path) << "head\n";
  for (int i = 0; i < 1500; ++i) std::ofstream(TailSegmentPath(path, i)) << "seg-" << i << "\n";
  // Numbers the log never writes: a leading zero, thirteen digits.
  std::ofstream(path + ".tail.01499") << "zero-padded\n";
  std::ofstream(path + ".tail.1234567890123") << "thirteen\n";
  {
    // An 8 GiB (sparse) file as the highest segment: any filesystem a CI runner has holds one.
    std::ofstream(TailSegmentPath(path, 1500)) << "huge\n";
    REQUIRE(truncate(TailSegmentPath(path, 1500).c_str(), int64_t{8} << 30) == 0);
  }
  CHECK(testing::InChild([&] { return StitchCappedLog(path, cap).ok(); }));
  std::string stored = Slurp(path);
  CHECK(stored.find("seg-0\n") == std::string::npos);
  CHECK(stored.find("seg-1498\n") == std::string::npos);
  CHECK(stored.find("zero-padded") == std::string::npos);
  CHECK(stored.find("thirteen") == std::string::npos);
  CHECK(stored.find("seg-1499\n") != std::string::npos);
  CHECK(stored.compare(stored.size() - 4096, 4096, std::string(4096, '\0')) == 0);  // its end
  CHECK(stored.size() <= 5 + 200 + static_cast<size_t>(cap / 2));
  CHECK(Segments(dir.path()) == 0);

  // 999999999999 × 4096 overflows no int64, × 16 MiB (a 64 MiB cap) would: refused.
  fs::remove(path);
  std::ofstream(path) << "head\n";
  std::ofstream(TailSegmentPath(path, 999999999999)) << "overflowing\n";
  CHECK(testing::InChild([&] { return StitchCappedLog(path, int64_t{64} << 20).ok(); }));
  CHECK(Slurp(path) == "head\n");
  CHECK(Segments(dir.path()) == 0);
}

}  // namespace
}  // namespace conclave::exec
