// Unit tests: JsonObject writes the text nlohmann's dump of the same members writes
// (common/json_object).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "common/json_object.h"

using namespace conclave;

namespace {
std::string Reference(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
}  // namespace

TEST_CASE("JsonObject's text is nlohmann's for random members", "[json]") {
  // Every control byte, quotes and backslashes, multi-byte and broken UTF-8, and keys that
  // sort differently from the order they are added in.
  const std::string pieces[] = {"a", "Z", " ", "\"", "\\", "/", "\x7f", "\xC3\xA9",
                                "\xF0\x9F\x98\x80", "\x80", "\xE2\x82", "\xC0\xAF", "\xFF"};
  const double doubles[] = {0.0, -0.0, 1.0, 0.1, 1e-5, 123456789.125, 1e300, -2.5e-300,
                            std::numeric_limits<double>::quiet_NaN(),
                            std::numeric_limits<double>::infinity(), 0.0001, 3.0e7};
  std::mt19937 rng(7);
  for (int round = 0; round < 500; ++round) {
    JsonObject mine;
    nlohmann::json ref = nlohmann::json::object();
    int members = static_cast<int>(rng() % 16);
    for (int i = 0; i < members; ++i) {
      std::string key = "k" + std::to_string(rng() % 40);
      if (rng() % 8 == 0) key += "\n\"";
      if (ref.contains(key)) continue;  // nlohmann keeps the first of equal keys: so does mine
      switch (rng() % 6) {
        case 0: {
          std::string s;
          for (int n = static_cast<int>(rng() % 12); n > 0; --n) {
            s += rng() % 3 == 0 ? std::string(1, static_cast<char>(rng() % 0x20))
                                : pieces[rng() % std::size(pieces)];
          }
          mine.Add(key, s);
          ref[key] = s;
          break;
        }
        case 1: {
          int64_t v = static_cast<int64_t>(rng()) * (int64_t{1} << (rng() % 30));
          if (rng() % 2) v = -v;
          mine.Add(key, v);
          ref[key] = v;
          break;
        }
        case 2: {
          int v = static_cast<int>(rng() % 1000) - 500;
          mine.Add(key, v);
          ref[key] = v;
          break;
        }
        case 3: {
          bool b = rng() % 2 == 0;
          mine.Add(key, b);
          ref[key] = b;
          break;
        }
        case 4: {
          double d = doubles[rng() % std::size(doubles)] * (rng() % 3 + 1);
          mine.Add(key, d);
          ref[key] = d;
          break;
        }
        case 5: {
          nlohmann::json inner = {{"x", static_cast<int>(rng() % 9)}, {"s", "q\"\n"}};
          mine.AddRaw(key, Reference(inner));
          ref[key] = inner;
          break;
        }
      }
    }
    INFO(Reference(ref));
    CHECK(mine.Dump() == Reference(ref));
  }
}

TEST_CASE("JsonObject keeps the first of equal keys and writes empty raw text as null", "[json]") {
  JsonObject o;
  o.Add("b", "first").Add("a", int64_t{1}).Add("b", "second").AddRaw("r", "");
  nlohmann::json ref = {{"b", "first"}, {"a", 1}, {"b", "second"}, {"r", nullptr}};
  CHECK(o.Dump() == Reference(ref));
  CHECK(o.Dump() == R"({"a":1,"b":"first","r":null})");
  CHECK(JsonObject().Dump() == "{}");
}
