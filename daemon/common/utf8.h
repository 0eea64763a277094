// UTF-8 hygiene for text that came from workers: protobuf string fields and JSON dumps
// require valid UTF-8, and a worker may print anything.
#pragma once

#include <string>
#include <string_view>

namespace conclave {

// Returns text with every invalid UTF-8 sequence replaced by U+FFFD.
std::string ValidUtf8(std::string_view text);

// At most max_bytes of valid UTF-8 from the start of text (never cuts a character).
std::string Utf8Prefix(std::string_view text, size_t max_bytes);

}  // namespace conclave
