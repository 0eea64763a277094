#include "store/counters.h"

namespace conclave::store {

int64_t ReadCounter(Database& db, std::string_view name) {
  auto st = db.Prepare("SELECT n FROM counters WHERE name = ?1");
  st.Bind(1, name);
  return st.Step() ? st.Int(0) : 0;
}

std::map<std::string, int64_t> ReadCounters(Database& db, const std::string& prefix) {
  // Names with the prefix sort between prefix and prefix + U+FFFF's first byte.
  auto st = db.Prepare("SELECT name, n FROM counters WHERE name >= ?1 AND name < ?2 AND n != 0");
  st.Bind(1, prefix).Bind(2, prefix + "\xff");
  std::map<std::string, int64_t> out;
  while (st.Step()) out[st.Text(0).substr(prefix.size())] = st.Int(1);
  return out;
}

}  // namespace conclave::store
