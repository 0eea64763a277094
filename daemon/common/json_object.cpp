#include "common/json_object.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace conclave {

std::string JsonQuote(std::string_view s) {
  // Text beyond ASCII goes to nlohmann itself: its UTF-8 checks and replacements are the rule.
  if (std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    return nlohmann::json(std::string(s)).dump(-1, ' ', false,
                                               nlohmann::json::error_handler_t::replace);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

JsonObject& JsonObject::Add(std::string_view key, std::string_view value) {
  members_.emplace_back(std::string(key), JsonQuote(value));
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
  std::vector<const std::pair<std::string, std::string>*> order;
  order.reserve(members_.size());
  size_t bytes = 2;
  for (const auto& m : members_) {
    order.push_back(&m);
    bytes += m.first.size() + m.second.size() + 4;
  }
  // std::map's order; the first of equal keys wins, as in nlohmann's initializer list.
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->first < b->first; });
  std::string out;
  out.reserve(bytes);
  out += '{';
  const std::string* last = nullptr;
  for (const auto* m : order) {
    if (last && *last == m->first) continue;
    if (last) out += ',';
    out += JsonQuote(m->first);
    out += ':';
    out += m->second;
    last = &m->first;
  }
  out += '}';
  return out;
}

}  // namespace conclave
