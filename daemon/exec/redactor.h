// StreamRedactor: replaces every occurrence of any secret with "[REDACTED]" in a byte stream
// fed in arbitrary chunks. It holds back only a tail that could be the start of a secret (at
// most longest secret − 1 bytes), so a secret split across two chunks is still caught while
// ordinary output is emitted at once. RedactAll() is the one-shot form for stored text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace conclave::exec {

inline constexpr std::string_view kRedacted = "[REDACTED]";

class StreamRedactor {
 public:
  explicit StreamRedactor(std::vector<std::string> secrets);

  // Returns the bytes that are safe to emit now.
  std::string Feed(std::string_view chunk);
  // Returns the held-back tail at end of stream.
  std::string Finish();

 private:
  std::vector<std::string> secrets_;
  std::string pending_;
};

std::string RedactAll(std::string_view text, const std::vector<std::string>& secrets);

}  // namespace conclave::exec
