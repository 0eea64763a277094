#include "store/state_columns.h"

#include <sqlite3.h>

namespace conclave::store {
namespace {
[[noreturn]] void Unknown(const char* column, const std::string& text) {
  throw StoreError(SQLITE_CORRUPT, std::string(column) + ": unknown value '" + text +
                                       "' (a damaged database, or one from a newer conclaved)");
}
}  // namespace

domain::TaskState TaskStateColumn(const std::string& text) {
  auto s = domain::ParseTaskState(text);
  if (!s) Unknown("tasks.status", text);
  return *s;
}

std::optional<domain::TaskState> OptionalTaskStateColumn(const std::string& text) {
  if (text.empty()) return std::nullopt;
  auto s = domain::ParseTaskState(text);
  if (!s) Unknown("tasks.resume_status", text);
  return s;
}

domain::DispatchState DispatchStateColumn(const std::string& text) {
  auto s = domain::ParseDispatchState(text);
  if (!s) Unknown("dispatches.state", text);
  return *s;
}

domain::TerminalState TerminalStateColumn(const std::string& text) {
  auto s = domain::ParseTerminalState(text);
  if (!s) Unknown("terminals.state", text);
  return *s;
}

domain::ReviewStatus ReviewStatusColumn(const std::string& text) {
  auto s = domain::ParseReviewStatus(text);
  if (!s) Unknown("reviews.status", text);
  return *s;
}

domain::RoundState RoundStateColumn(const std::string& text) {
  auto s = domain::ParseRoundState(text);
  if (!s) Unknown("review_rounds.state", text);
  return *s;
}

}  // namespace conclave::store
