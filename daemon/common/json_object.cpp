#include "common/json_object.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace conclave {

void AppendJsonQuoted(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  const size_t start = out->size();
  out->reserve(start + s.size() + 2);
  *out += '"';
  size_t run = 0;  // the start of the bytes not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) continue;
    if (c >= 0x80) {
      // Text beyond ASCII goes to nlohmann itself: its UTF-8 checks and replacements rule.
      out->resize(start);
      *out += nlohmann::json(std::string(s)).dump(-1, ' ', false,
                                                  nlohmann::json::error_handler_t::replace);
      return;
    }
    out->append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        *out += "\\u00";
        *out += kHex[c >> 4];
        *out += kHex[c & 0xf];
    }
  }
  out->append(s.data() + run, s.size() - run);
  *out += '"';
}

JsonObject& JsonObject::Add(std::string_view key, std::string_view value) {
  auto& [k, v] = members_.emplace_back(std::string(key), std::string());
  AppendJsonQuoted(&v, value);
  return *this;
}

JsonObject& JsonObject::Add(std::string_view key, int64_t value) {
  members_.emplace_back(std::string(key), std::to_string(value));
  return *this;
}

JsonObject& JsonObject::Add(std::string_view key, bool value) {
  members_.emplace_back(std::string(key), value ? "true" : "false");
  return *this;
}

JsonObject& JsonObject::Add(std::string_view key, double value) {
  // nlohmann's shortest round-trip form ("0.0", "1e-05", null for NaN): printed by it.
  members_.emplace_back(std::string(key), nlohmann::json(value).dump());
  return *this;
}

JsonObject& JsonObject::AddRaw(std::string_view key, std::string_view json) {
  members_.emplace_back(std::string(key), json.empty() ? std::string("null") : std::string(json));
  return *this;
}

std::string JsonObject::Dump() const {
  std::vector<uint32_t> order(members_.size());
  size_t bytes = 2;
  for (uint32_t i = 0; i < order.size(); ++i) {
    order[i] = i;
    bytes += members_[i].first.size() + members_[i].second.size() + 4;
  }
  // std::map's order; the first of equal keys wins, as in nlohmann's initializer list.
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return members_[a].first < members_[b].first; });
  std::string out;
  out.reserve(bytes);
  out += '{';
  const std::string* last = nullptr;
  for (uint32_t i : order) {
    const auto& [key, value] = members_[i];
    if (last && *last == key) continue;
    if (last) out += ',';
    AppendJsonQuoted(&out, key);
    out += ':';
    out += value;
    last = &key;
  }
  out += '}';
  return out;
}

}  // namespace conclave
