// ReadFileInto: the whole of a small file (a /proc entry, the spawn journal) with open/read,
// no stream objects. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace conclave {

// Appends up to max_bytes of the file at path to *out (reads go on until EOF or the limit);
// false when it cannot be opened. extra_flags are OR-ed into open's flags (O_NOFOLLOW).
bool ReadFileInto(const char* path, std::string* out, size_t max_bytes = SIZE_MAX,
                  int extra_flags = 0);

}  // namespace conclave
