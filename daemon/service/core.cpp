#include "service/core.h"

#include "common/clock.h"
#include "common/random.h"
#include "common/utf8.h"

namespace conclave::service {

void Core::Emit(domain::MessageRecord& m) {
  m.subject = Utf8Prefix(m.subject, domain::kMaxSubjectBytes);
  m.body = Utf8Prefix(m.body, domain::kMaxBodyBytes);
  m.payload = ValidUtf8(m.payload);
  if (m.created_ms == 0) m.created_ms = NowMs();
  if (m.thread_id.empty()) m.thread_id = "t-" + RandomHex(6);
  messages.Insert(m);
  batcher.Publish(m);
}

std::string Core::FamilyOf(const store::TerminalRecord& t) const {
  const exec::Profile* p = profiles.Find(t.profile);
  return p ? p->family : "";
}

}  // namespace conclave::service
