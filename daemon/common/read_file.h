// ReadFileInto: the whole of a small file (a /proc entry, the spawn journal) with open/read,
// no stream objects. ReadRegularFile / ReadFirstLine: a file someone else may have planted (a
// worker's repository, its dispatch directory) — read only when it is a regular file, never
// waiting on a FIFO or reading a device without end. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace conclave {

// Appends up to max_bytes of the file at path to *out (reads go on until EOF or the limit);
// false when it cannot be opened. extra_flags are OR-ed into open's flags (O_NOFOLLOW).
bool ReadFileInto(const char* path, std::string* out, size_t max_bytes = SIZE_MAX,
                  int extra_flags = 0);

// Up to max_bytes of path, opened without blocking or taking a terminal (O_NONBLOCK, O_NOCTTY;
// extra_flags OR-ed in, e.g. O_NOFOLLOW) and read only when what was opened is a regular file.
// False otherwise — missing, unreadable, a FIFO, a socket, a device, a directory — and then
// nothing is appended.
bool ReadRegularFile(const char* path, std::string* out, size_t max_bytes, int extra_flags = 0);

// A descriptor (O_RDONLY, non-blocking, no terminal; extra_flags OR-ed in) on path when what
// it opens is a regular file; -1 otherwise. For a file read many times (a transcript followed).
int OpenRegularFile(const char* path, int extra_flags = 0);

// The first line of a regular file (read as ReadRegularFile), without its line end or trailing
// blanks; false when ReadRegularFile is, or when the first line is longer than max_bytes.
bool ReadFirstLine(const char* path, std::string* line, size_t max_bytes = 4096,
                   int extra_flags = 0);

// ReadRegularFile / ReadFirstLine of rel inside dir, resolved without following any link on
// the way (dir's last component included) and without leaving dir (openat2 RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS, or OpenBeneathByWalk where openat2 is unavailable): a worker that made a
// directory of its repository a link cannot point the daemon at a file hidden from it. False
// when that cannot be done.
bool ReadRegularFileBeneath(const std::string& dir, const std::string& rel, std::string* out,
                            size_t max_bytes);
// The descriptor those two read from (O_RDONLY, non-blocking, no terminal); -1 when rel cannot
// be opened that way, with errno saying why (EWOULDBLOCK: a file lease's holder must let go
// first). The caller checks what it is and closes it.
int OpenBeneath(const std::string& dir, const std::string& rel);
// OpenBeneath's way where openat2 is missing or refused: rel below the directory dfd one
// component at a time, each opened O_NOFOLLOW; an empty, "." or ".." component or an absolute
// rel is refused.
int OpenBeneathByWalk(int dfd, const std::string& rel);
bool ReadFirstLineBeneath(const std::string& dir, const std::string& rel, std::string* line,
                          size_t max_bytes = 4096);

}  // namespace conclave
