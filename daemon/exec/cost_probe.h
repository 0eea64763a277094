// CostProbe: follows a worker's stdout as it streams and picks up the running cost it
// reports — a JSON line carrying total_cost_usd / cost_usd (claude stream-json) or a plain
// "conclave-cost-usd: X" line — so a run that passes its per-dispatch cap can be stopped
// while it runs. Memory is bounded: a partial line is kept up to 1 MiB, and a longer line
// reports no cost. Each chunk costs time in its own size only. Numbers are parsed
// with bounds: garbage is ignored, never thrown.
// Thread-safety: one instance per run, loop thread only.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace conclave::exec {

class CostProbe {
 public:
  // Feeds a chunk of stdout; returns the latest cost seen in the complete lines it finished.
  std::optional<double> Feed(std::string_view chunk);
  double latest() const { return latest_; }

 private:
  std::string partial_;   // the unfinished line, when it spans chunks
  bool overlong_ = false;  // the unfinished line passed 1 MiB: skipped to its end
  double latest_ = 0;
};

// The cost a single line reports, if any (exposed for tests).
std::optional<double> CostFromLine(std::string_view line);

}  // namespace conclave::exec
