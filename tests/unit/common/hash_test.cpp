// Unit tests: the daemon's hashes (common/hash): SHA-256 of tokens and artifacts, FNV-1a of
// fingerprints, each as lowercase hex, against published vectors and sha256sum.
#include <catch2/catch.hpp>
#include <string>

#include "common/hash.h"

using namespace conclave;

TEST_CASE("SHA-256 matches the published vectors", "[hash]") {
  CHECK(Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(Sha256Hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 pads correctly on both sides of each block boundary", "[hash]") {
  // `head -c N /dev/zero | tr '\0' a | sha256sum`: 55 and 56 bytes are where the length stops
  // fitting in the last block, 64 and 128 whole blocks.
  const std::pair<size_t, const char*> cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
      {128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"},
  };
  for (const auto& [n, hex] : cases) {
    INFO(n << " bytes");
    CHECK(Sha256Hex(std::string(n, 'a')) == hex);
  }
}

TEST_CASE("FNV-1a 64 and its hex form", "[hash]") {
  CHECK(Hex64(Fnv1a64("")) == "cbf29ce484222325");
  CHECK(Hex64(Fnv1a64("a")) == "af63dc4c8601ec8c");
  CHECK(Hex64(Fnv1a64("foobar")) == "85944171f73967e8");
  CHECK(Hex64(0) == "0000000000000000");
  CHECK(Hex64(0xfedcba9876543210ULL) == "fedcba9876543210");
}
