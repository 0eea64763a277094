#include "api/request_checks.h"

#include <cmath>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../../proto/lenient/lenient_parse.h"
#include "common/utf8.h"

namespace conclave::api {

namespace pb = google::protobuf;

static_assert(std::string_view(proto::kInvalidUtf8Marker) == kInvalidUtf8Marker,
              "the lenient parser and the checks must agree on the marker");

namespace {

constexpr int kMaxRepeated = 10000;
constexpr int kMaxJsonDepth = 64;
constexpr int64_t kMaxInt64 = (int64_t{1} << 53) - 1;  // exact in JSON and JavaScript
constexpr size_t kDefaultStringBytes = 4096;

// Looked up once per field of each request type (RulesOf): flat tables of views, scanned.
struct NamedLimit {
  std::string_view name;
  int64_t limit;
};

template <size_t N>
const int64_t* FindLimit(const NamedLimit (&table)[N], std::string_view name) {
  for (const auto& e : table) {
    if (e.name == name) return &e.limit;
  }
  return nullptr;
}

size_t StringLimit(const pb::FieldDescriptor* f) {
  static constexpr NamedLimit kLimits[] = {
      {"brief", 1 << 20},          {"body", 1 << 20},         {"artifact", 4 << 20},
      {"payload_json", 256 << 10}, {"hypothesis", 64 << 10}, {"scope", 64 << 10},
      {"validation", 64 << 10},    {"question", 64 << 10},    {"reason", 64 << 10},
      {"decision", 64 << 10},      {"verify", 64 << 10},      {"subject", 1024},
      {"title", 512},              {"idempotency_key", 256},
  };
  const int64_t* limit = FindLimit(kLimits, f->name());
  return limit ? static_cast<size_t>(*limit) : kDefaultStringBytes;
}

int64_t IntMax(const pb::FieldDescriptor* f) {
  static constexpr NamedLimit kCaps[] = {
      {"limit", 10000},       {"auto_retry", 20},            {"cap", 10},
      {"max_fix_rounds", 20}, {"timeout_s", 30 * 24 * 3600}, {"max_bytes", 4 << 20},
      {"max_chunk_bytes", 1 << 20},
  };
  if (const int64_t* cap = FindLimit(kCaps, f->name())) return *cap;
  return f->cpp_type() == pb::FieldDescriptor::CPPTYPE_INT32 ? INT32_MAX : kMaxInt64;
}

// Fields where -1 is a documented value ("-1 = the configured default", "-1 = 2").
bool MinusOneAllowed(const pb::FieldDescriptor* f) {
  const std::string& n = f->full_name();
  return n == "conclave.v1.StartReviewRequest.cap" || n == "conclave.v1.FlowStartRequest.cap" ||
         n == "conclave.v1.FlowStartRequest.max_fix_rounds";
}

// Deepest nesting of arrays and objects in a JSON text, outside strings (no parse: a
// deliberately deep document must not reach a recursive parser or printer).
int JsonDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    else if (c == ']' || c == '}') --depth;
  }
  return deepest;
}

bool EndsWith(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// What the checks need of one field, worked out from its descriptor once: the name lookups
// above cost ~1.5k instructions a request when they ran for every field of every call.
struct FieldRule {
  const pb::FieldDescriptor* f;
  size_t string_limit;  // strings and bytes
  bool json;            // a string whose name ends in _json
  int64_t int_max;      // integers
  bool minus_one;       // an integer that may be -1
};

const std::vector<FieldRule>& RulesOf(const pb::Descriptor* d) {
  // Per thread: the polling thread checks every request; no lock for the few descriptors.
  thread_local std::unordered_map<const pb::Descriptor*, std::vector<FieldRule>> rules;
  auto it = rules.find(d);
  if (it != rules.end()) return it->second;
  std::vector<FieldRule> made;  // whole before it is kept: a half-built table would skip fields
  for (int k = 0; k < d->field_count(); ++k) {
    const pb::FieldDescriptor* f = d->field(k);
    made.push_back(
        {f, StringLimit(f), EndsWith(f->name(), "_json"), IntMax(f), MinusOneAllowed(f)});
  }
  return rules.emplace(d, std::move(made)).first->second;
}

Status CheckString(const FieldRule& rule, const std::string& v) {
  const pb::FieldDescriptor* f = rule.f;
  // A request that parsed has valid UTF-8 in every string field (protobuf refuses anything
  // else for proto3 strings); a field that had none holds exactly the marker (proto/lenient).
  if (f->type() == pb::FieldDescriptor::TYPE_STRING && v == kInvalidUtf8Marker) {
    return InvalidArgument(f->name() + ": not valid UTF-8");
  }
  if (v.size() > rule.string_limit) {
    return InvalidArgument(f->name() + ": " + std::to_string(v.size()) +
                           " bytes exceeds the limit of " + std::to_string(rule.string_limit));
  }
  if (rule.json && JsonDepth(v) > kMaxJsonDepth) {
    return InvalidArgument(f->name() + ": JSON nested deeper than " +
                           std::to_string(kMaxJsonDepth) + " levels");
  }
  return Status::Ok();
}

Status CheckInt(const FieldRule& rule, int64_t v) {
  const std::string& name = rule.f->name();
  if (v < 0 && !(v == -1 && rule.minus_one)) {
    return InvalidArgument(name + ": " + std::to_string(v) + " is negative");
  }
  if (v > rule.int_max) {
    return InvalidArgument(name + ": " + std::to_string(v) + " is above the most allowed, " +
                           std::to_string(rule.int_max));
  }
  return Status::Ok();
}

Status CheckDouble(const pb::FieldDescriptor* f, double v) {
  if (!std::isfinite(v)) return InvalidArgument(f->name() + ": not a finite number");
  if (v < 0) return InvalidArgument(f->name() + ": " + std::to_string(v) + " is negative");
  return Status::Ok();
}

Status CheckField(const pb::Message& m, const pb::Reflection* r, const FieldRule& rule, int i) {
  const pb::FieldDescriptor* f = rule.f;
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_STRING: {
      std::string scratch;
      const std::string& v = rep ? r->GetRepeatedStringReference(m, f, i, &scratch)
                                 : r->GetStringReference(m, f, &scratch);
      return CheckString(rule, v);
    }
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return CheckInt(rule, rep ? r->GetRepeatedInt32(m, f, i) : r->GetInt32(m, f));
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return CheckInt(rule, rep ? r->GetRepeatedInt64(m, f, i) : r->GetInt64(m, f));
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      return CheckDouble(f, rep ? r->GetRepeatedDouble(m, f, i) : r->GetDouble(m, f));
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      return CheckRequest(rep ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f));
    default:
      return Status::Ok();
  }
}

}  // namespace

Status CheckRequest(const pb::Message& req) {
  const pb::Reflection* r = req.GetReflection();
  for (const FieldRule& rule : RulesOf(req.GetDescriptor())) {
    const pb::FieldDescriptor* f = rule.f;
    if (f->is_repeated()) {
      const int n = r->FieldSize(req, f);
      if (n > kMaxRepeated) {
        return InvalidArgument(f->name() + ": " + std::to_string(n) + " entries, at most " +
                               std::to_string(kMaxRepeated));
      }
      for (int i = 0; i < n; ++i) {
        if (Status s = CheckField(req, r, rule, i); !s.ok()) return s;
      }
    } else if (!f->has_presence() || r->HasField(req, f)) {
      if (Status s = CheckField(req, r, rule, 0); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

std::string CapStatusMessage(std::string message) {
  constexpr size_t kMax = 1024;
  if (message.size() <= kMax) return message;
  std::string out = Utf8Prefix(message, kMax);
  out += "… (" + std::to_string(message.size()) + " bytes)";
  return out;
}

}  // namespace conclave::api
