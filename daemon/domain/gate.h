// Gate: a coordinator-owned decision that blocks a task (or a review) until resolved;
// Handle: an addressable name (never reissued once closed). Plain records. Pure.
#pragma once

#include <cstdint>
#include <string>

namespace conclave::domain {

struct Gate {
  int64_t id = 0;
  int64_t task_id = 0;
  int64_t review_id = 0;
  std::string question;
  std::string options = "[]";   // JSON array
  std::string status = "open";  // open | resolved
  std::string decision;
  int64_t created_ms = 0, resolved_ms = 0;
  int64_t flow_id = 0;  // a flow stopped for a person (needs_human): its decision
};

struct Handle {
  std::string name;
  std::string kind;  // handle | terminal | coordinator
  int64_t created_ms = 0;
  bool closed = false;
};

}  // namespace conclave::domain
