// TerminalService: worker terminals — create, list, show, close (draining a busy one), the
// transcript of a terminal's dispatches, and what a terminal becomes when its run ends.
// Every terminal state change goes through domain::MoveTerminal. Loop thread only; writes run
// inside the commit batcher and answer after COMMIT.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/terminal.h"
#include "service/core.h"
#include "service/messaging_service.h"
#include "service/ports.h"

namespace conclave::service {

struct TranscriptResult {
  int64_t dispatch_id = 0;
  std::string data;
  int64_t next_cursor = 0;
  bool eof = false;
};

// A terminal as the API shows it.
struct TerminalView {
  domain::Terminal terminal;
  std::string family;
};

class TerminalService {
 public:
  explicit TerminalService(Core& core) : core_(core) {}
  void Connect(RunControl* runs) { runs_ = runs; }

  void Create(const std::string& profile, const std::string& handle, const std::string& cwd,
              bool exclusive, Done<TerminalView> done);
  std::vector<TerminalView> List(bool include_closed);
  StatusOr<TerminalView> Get(const std::string& handle);
  void Close(const std::string& handle, bool force, Done<TerminalView> done);
  StatusOr<TranscriptResult> ReadTranscript(const std::string& handle, int64_t dispatch_id,
                                            int64_t cursor, int max_bytes);

  // Inside a write: the terminal that ran dispatch_id is freed (idle), or closed when it was
  // draining. A terminal that moved on to another dispatch is left alone.
  void ReleaseAfterRun(const std::string& handle, int64_t dispatch_id);
  // Inside a write: a terminal for `profile` with its own directory (review rounds); reuses an
  // open one of that profile.
  std::string EnsureFor(const std::string& profile, const std::string& cwd,
                        const std::string& prefix);
  // Inside a write: moves t and saves it; closing also closes its handle.
  Status Move(domain::Terminal& t, domain::TerminalState to, int64_t active_dispatch = 0);

 private:
  TerminalView View(const domain::Terminal& t) const { return {t, core_.FamilyOf(t)}; }
  Core& core_;
  RunControl* runs_ = nullptr;
};

}  // namespace conclave::service
