// Hashes, in one place: FNV-1a 64 for short content identities (failure and disagreement
// fingerprints — stable, not secure) and SHA-256 for what must not collide or be forged
// (artifact identity, stored dispatch tokens). Pure, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace conclave {

uint64_t Fnv1a64(std::string_view data);
// 16 lower-case hex digits.
std::string Hex64(uint64_t v);
// 64 lower-case hex digits of SHA-256(data).
std::string Sha256Hex(std::string_view data);

}  // namespace conclave
