// Reading and writing the lifecycle columns (tasks.status, tasks.resume_status,
// dispatches.state, terminals.state, reviews.status, review_rounds.state): the stored text is the domain state's name. A value the
// domain does not know means the database is damaged or newer than this daemon: StoreError.
#pragma once

#include <string>

#include "domain/dispatch.h"
#include "domain/review_record.h"
#include "domain/task.h"
#include "domain/terminal.h"
#include "store/database.h"

namespace conclave::store {

domain::TaskState TaskStateColumn(const std::string& text);
std::optional<domain::TaskState> OptionalTaskStateColumn(const std::string& text);  // "" = none
domain::DispatchState DispatchStateColumn(const std::string& text);
domain::TerminalState TerminalStateColumn(const std::string& text);
domain::ReviewStatus ReviewStatusColumn(const std::string& text);
domain::RoundState RoundStateColumn(const std::string& text);

inline std::string Text(domain::TaskState s) { return std::string(domain::TaskStateName(s)); }
inline std::string Text(std::optional<domain::TaskState> s) {
  return s ? std::string(domain::TaskStateName(*s)) : std::string();
}
inline std::string Text(domain::DispatchState s) {
  return std::string(domain::DispatchStateName(s));
}
inline std::string Text(domain::TerminalState s) {
  return std::string(domain::TerminalStateName(s));
}
inline std::string Text(domain::ReviewStatus s) { return std::string(domain::ReviewStatusName(s)); }
inline std::string Text(domain::RoundState s) { return std::string(domain::RoundStateName(s)); }

}  // namespace conclave::store
