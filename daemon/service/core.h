// Core: what every service shares — the loop, the config, the store and its repositories,
// the commit batcher, the event bus and the loaded profiles. Owned by Daemon; loop thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <string>

#include "config/config.h"
#include "events/event_bus.h"
#include "exec/profile.h"
#include "service/commit_batcher.h"
#include "store/database.h"
#include "store/dispatch_store.h"
#include "store/gate_store.h"
#include "store/handle_store.h"
#include "store/message_store.h"
#include "store/task_store.h"
#include "store/terminal_store.h"

namespace conclave::service {

class TranscriptFollower;

struct Core {
  Core(boost::asio::io_context& io_ctx, const config::Config& cfg, store::Database& database)
      : io(io_ctx),
        config(cfg),
        db(database),
        messages(database),
        handles(database),
        terminals(database),
        tasks(database),
        dispatches(database),
        gates(database),
        bus(io_ctx),
        batcher(io_ctx, database, [this](const auto& ms) { bus.Publish(ms); }) {}

  boost::asio::io_context& io;
  const config::Config& config;
  store::Database& db;
  store::MessageStore messages;
  store::HandleStore handles;
  store::TerminalStore terminals;
  store::TaskStore tasks;
  store::DispatchStore dispatches;
  store::GateStore gates;
  events::EventBus bus;
  CommitBatcher batcher;
  exec::ProfileSet profiles;
  int64_t started_ms = 0;
  std::string listener;
  // Live transcript streams; set by Services. The run supervisor calls its OnAppended and
  // OnFinished hooks.
  TranscriptFollower* transcripts = nullptr;

  // Hooks installed by the dispatch service (messaging must not depend on it):
  // validates a worker's own report (type worker_done with a dispatch token) and fills in the
  // recipient when the worker gave none.
  std::function<Status(domain::MessageRecord&, const std::string& token)> worker_report_hook;
  // Liveness of the active dispatch of each task (for a Wait that timed out).
  struct Liveness {
    int64_t task_id = 0, dispatch_id = 0, last_output_age_ms = -1;
    bool process_alive = false;
    std::string state;
  };
  std::function<std::vector<Liveness>(const std::vector<int64_t>&)> liveness_hook;

  // Appends a message to the log and queues it for waiters (call inside batcher.Write).
  void Emit(domain::MessageRecord& m);

  // Family of a terminal's profile ("" when the profile is gone).
  std::string FamilyOf(const store::TerminalRecord& t) const;
};

}  // namespace conclave::service
