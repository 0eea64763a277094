// Fuzz target: message validation (domain/message): type, priority, subject, body, payload
// JSON, sender handle and UTF-8. Input: type, NUL, priority, NUL, subject, NUL, body, NUL,
// payload, NUL, from (fuzz_input.h). Properties: an accepted message is within every size
// limit, has valid UTF-8 and JSON, and a rejected one says which field.
#include <nlohmann/json.hpp>

#include "common/utf8.h"
#include "domain/message.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace conclave;
  auto f = fuzz::Fields(data, size, 6);
  domain::MessageRecord m;
  m.type = std::string(f[0]);
  m.priority = std::string(f[1]);
  m.subject = std::string(f[2]);
  m.body = std::string(f[3]);
  m.payload = std::string(f[4]);
  m.from = std::string(f[5]);
  m.task_id = size % 3 == 0 ? -static_cast<int64_t>(size) : static_cast<int64_t>(size);
  Status s = domain::ValidateMessage(m);
  if (s.ok()) {
    if (m.subject.size() > domain::kMaxSubjectBytes || m.body.size() > domain::kMaxBodyBytes ||
        m.payload.size() > domain::kMaxPayloadBytes) {
      fuzz::PropertyFailed("oversized message accepted");
    }
    if (ValidUtf8(m.subject) != m.subject || ValidUtf8(m.body) != m.body) {
      fuzz::PropertyFailed("invalid UTF-8 accepted");
    }
    if (!m.payload.empty() && !nlohmann::json::accept(m.payload)) {
      fuzz::PropertyFailed("invalid payload JSON accepted");
    }
    if (!domain::IsMessageType(m.type) || m.task_id < 0) fuzz::PropertyFailed("bad field accepted");
  } else if (s.message().find(':') == std::string::npos) {
    fuzz::PropertyFailed("error does not name its field");
  }
  Status h = domain::ValidateHandleName(m.from, "from");
  if (h.ok() && (m.from.empty() || m.from.size() > domain::kMaxHandleBytes)) {
    fuzz::PropertyFailed("bad handle accepted");
  }
  return 0;
}
