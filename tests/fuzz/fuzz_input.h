// Input helpers shared by the libFuzzer targets in this directory. A target that takes several
// strings reads them from one input split at NUL bytes ("a\0b\0c"): seeds stay readable and
// libFuzzer's mutations (insert/erase a byte) move text between fields. Header-only, pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::fuzz {

// Splits `data` at the first n-1 NUL bytes into exactly n fields (missing ones are empty; the
// last field keeps any further NULs).
inline std::vector<std::string_view> Fields(const uint8_t* data, size_t size, size_t n) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> out;
  while (out.size() + 1 < n) {
    size_t nul = rest.find('\0');
    if (nul == std::string_view::npos) break;
    out.push_back(rest.substr(0, nul));
    rest.remove_prefix(nul + 1);
  }
  out.push_back(rest);
  out.resize(n);
  return out;
}

// A model CLI's run: byte 0 is the exit status (255 stands for -1, killed by a signal), then
// stdout, a NUL, and the stderr tail.
struct CliRun {
  int exit_code = 0;
  std::string_view out, err;
};

inline CliRun ReadCliRun(const uint8_t* data, size_t size) {
  CliRun run;
  if (size == 0) return run;
  run.exit_code = data[0] == 255 ? -1 : data[0];
  auto f = Fields(data + 1, size - 1, 2);
  run.out = f[0];
  run.err = f[1];
  return run;
}

// A property the target checks failed: libFuzzer records the input as a crash.
[[noreturn]] inline void PropertyFailed(const char* what) {
  std::fprintf(stderr, "property failed: %s\n", what);
  std::abort();
}

}  // namespace conclave::fuzz
