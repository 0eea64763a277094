// Random identifiers: thread ids and dispatch tokens (from the kernel's CSPRNG).
#pragma once

#include <string>

namespace conclave {

// n random bytes as 2n lower-case hex characters.
std::string RandomHex(size_t n_bytes);

}  // namespace conclave
