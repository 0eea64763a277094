#include "service/core.h"

#include "common/random.h"
#include "common/utf8.h"

namespace conclave::service {

Core::Core(boost::asio::io_context& io_ctx, const config::Config& cfg, store::Database& database,
           Clock& clk, exec::Launcher& launch, exec::CommandRunner& cmds)
    : io(io_ctx),
      config(cfg),
      db(database),
      clock(clk),
      launcher(launch),
      commands(cmds),
      messages(database),
      handles(database),
      terminals(database),
      tasks(database),
      dispatches(database),
      gates(database),
      cooldowns(database),
      spend(database),
      bus(io_ctx),
      batcher(io_ctx, database, clk, [this](const auto& ms) { bus.Publish(ms); }) {}

void Core::Emit(domain::MessageRecord& m) {
  // Whatever a worker echoes into a message, no standing secret reaches the store.
  m.subject = Utf8Prefix(redactor.Apply(m.subject), domain::kMaxSubjectBytes);
  m.body = Utf8Prefix(redactor.Apply(m.body), domain::kMaxBodyBytes);
  m.payload = ValidUtf8(redactor.Apply(m.payload));
  if (m.created_ms == 0) m.created_ms = clock.NowMs();
  if (m.thread_id.empty()) m.thread_id = "t-" + RandomHex(6);
  messages.Insert(m);
  batcher.Publish(m);
}

void Core::Notify(const Notice& n) {
  domain::MessageRecord m;
  m.type = n.type;
  m.priority = n.priority;
  m.from = std::string(domain::kDaemonSender);
  m.to = n.to.empty() ? "coordinator" : n.to;
  m.subject = n.subject;
  m.body = n.body;
  m.payload = n.payload;
  m.task_id = n.task_id;
  m.dispatch_id = n.dispatch_id;
  m.thread_id = n.task_id ? "task-" + std::to_string(n.task_id) : "";
  Emit(m);
}

std::string Core::FamilyOf(const domain::Terminal& t) const {
  const exec::Profile* p = profiles.Find(t.profile);
  return p ? p->family : "";
}

std::string Core::DispatchDir(int64_t id) const {
  return config.state_dir + "/dispatches/" + std::to_string(id);
}

std::string Core::SocketPath() const {
  return listener.rfind("unix:", 0) == 0 ? listener.substr(5) : listener;
}

}  // namespace conclave::service
