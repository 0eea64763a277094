#include "service/completion_facts.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/read_file.h"
#include "common/utf8.h"
#include "exec/capped_log.h"
#include "exec/confined_runner.h"
#include "exec/worktree_check.h"

namespace conclave::service {
namespace {

constexpr size_t kMaxParsedStdout = 8 << 20;  // parse at most the last 8 MiB of stdout
constexpr size_t kMaxResultText = 64 << 10;   // stored result text is bounded

// The last max bytes of a regular file: a FIFO, a device or a link where the log should be
// reads as nothing (a helper thread never waits on what a worker planted).
std::string ReadTail(const std::string& path, size_t max) {
  int fd = OpenRegularFile(path.c_str(), O_NOFOLLOW);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0) close(fd);
    return "";
  }
  off_t size = st.st_size;
  off_t start = size > static_cast<off_t>(max) ? size - static_cast<off_t>(max) : 0;
  std::string out(static_cast<size_t>(size - start), '\0');
  ssize_t n = pread(fd, out.data(), out.size(), start);
  close(fd);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

// On the loop: only a regular file of at most max bytes, opened without blocking (a FIFO) or
// following a link; nullopt otherwise (the helpers read it then). No file: empty.
std::optional<std::string> ReadSmallRegularFile(const std::string& path, size_t max) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) return errno == ENOENT ? std::optional<std::string>("") : std::nullopt;
  struct stat st {};
  std::optional<std::string> out;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<size_t>(st.st_size) <= max) {
    std::string text(static_cast<size_t>(st.st_size), '\0');
    ssize_t n = pread(fd, text.data(), text.size(), 0);
    if (n >= 0) {
      text.resize(static_cast<size_t>(n));
      out = std::move(text);
    }
  }
  close(fd);
  return out;
}

std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return Utf8Prefix(std::string_view(text).substr(start, end - start + 1), 500);
}

std::string Bounded(const std::string& s) {
  if (s.size() <= kMaxResultText) return ValidUtf8(s);
  return "[... " + std::to_string(s.size() - kMaxResultText) + " bytes elided ...]\n" +
         ValidUtf8(s.substr(s.size() - kMaxResultText));
}

domain::RunFacts RunFactsOf(const CompletionSnapshot& snap, const exec::RunOutcome& o,
                            const std::string& stdout_text) {
  domain::RunFacts r;
  r.stop = o.stop;
  r.stop_detail = o.stop_detail;
  r.hard_timeout = o.hard_timeout;
  r.idle_killed = o.idle_killed;
  r.exit_code = o.exit_code;
  r.term_signal = o.term_signal;
  r.duration_ms = snap.now_ms - snap.dispatch.started_ms;
  r.idle_kill_s = snap.profile ? snap.profile->idle_timeout_s * 3 : 0;
  r.last_line = LastLine(o.stderr_tail.empty() ? stdout_text : o.stderr_tail);
  return r;
}

domain::Cost CostOf(const CompletionSnapshot& snap, const exec::ParsedOutput& parsed,
                    double probed_cost) {
  domain::Usage usage{parsed.usage.input_tokens, parsed.usage.output_tokens,
                      parsed.usage.cache_read_tokens};
  // A cost the worker streamed while running stands in for a final report.
  std::optional<double> reported = parsed.reported_cost_usd;
  if (!reported && probed_cost > 0) reported = probed_cost;
  // DeepSeek/GLM/Kimi run the claude CLI, which prices them with Anthropic's table.
  if (snap.profile && !snap.profile->trust_reported_cost) reported.reset();
  return domain::ComputeCost(reported, usage, snap.profile ? snap.profile->price : domain::PriceTable{});
}

// commands null (on the loop): nothing runs, nothing is stitched, stdout.log is read only when
// it is a regular file of at most inline_max bytes; nullopt where more would be needed.
std::optional<CompletionFacts> Gather(const CompletionSnapshot& snap,
                                      const exec::RunOutcome& outcome, double probed_cost,
                                      exec::CommandRunner* commands, size_t inline_max) {
  CompletionFacts f;
  const exec::Profile* p = snap.profile ? &*snap.profile : nullptr;
  const std::string stdout_path = snap.dispatch_dir + "/stdout.log";
  std::string stdout_text;
  if (commands) {
    // A capped log's kept tail goes back behind its head before anyone reads it.
    (void)exec::StitchCappedLog(snap.dispatch_dir + "/transcript.log", snap.log_cap_bytes);
    (void)exec::StitchCappedLog(stdout_path, snap.log_cap_bytes);
    stdout_text = ReadTail(stdout_path, kMaxParsedStdout);
  } else {
    // A run that printed this little never reached a log's cap (whole MiB): nothing to stitch.
    auto small = ReadSmallRegularFile(stdout_path, inline_max);
    if (!small) return std::nullopt;
    stdout_text = std::move(*small);
  }
  f.parsed = exec::ParseCliOutput(p ? p->parser : "text", stdout_text, outcome.stderr_tail,
                                  outcome.exit_code);
  f.run = RunFactsOf(snap, outcome, stdout_text);
  f.output = {f.parsed.failure, f.parsed.evidence, f.parsed.result_text};
  f.ran_clean = outcome.stop == domain::StopReason::kNone && !outcome.hard_timeout &&
                !outcome.idle_killed && f.parsed.failure == domain::FailureKind::kNone &&
                outcome.exit_code == 0;
  bool reviewer = snap.task.role == "reviewer";
  f.contract.required = p && p->type == "cli" && !reviewer;
  if (p && p->contract.has_value()) f.contract.required = *p->contract;
  if (reviewer) f.contract.required = false;
  f.contract.writer = snap.task.role == "writer";
  f.contract.reviewer = reviewer;
  if (f.ran_clean) {
    f.contract.contract = domain::ParseWorkerContract(f.parsed.result_text);
    f.result["contract"] = domain::ContractToJson(f.contract.contract);
    if (f.contract.writer && !f.contract.contract.changed_files.empty()) {
      if (!commands) return std::nullopt;
      f.contract.unpersisted =
          exec::WithHelperRunner(*commands, snap.git_sandbox, [&](exec::CommandRunner& runner) {
            return exec::UnpersistedClaims(runner,
                                           {snap.terminal_cwd, snap.dispatch.start_head,
                                            snap.dispatch.started_ms, snap.dirty_at_start},
                                           f.contract.contract.changed_files);
          });
    }
  }
  f.result["text"] = Bounded(f.parsed.result_text);
  f.result["usage"] = {{"input_tokens", f.parsed.usage.input_tokens},
                       {"output_tokens", f.parsed.usage.output_tokens},
                       {"cache_read_tokens", f.parsed.usage.cache_read_tokens}};
  if (f.parsed.structured_output) f.result["structured_output"] = *f.parsed.structured_output;
  f.result["stdout_bytes"] = outcome.stdout_bytes;
  f.result["stderr_bytes"] = outcome.stderr_bytes;
  f.cost = CostOf(snap, f.parsed, probed_cost);
  f.result_text = DumpJson(f.result);
  return f;
}

}  // namespace

std::string DumpJson(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

CompletionFacts GatherFacts(const CompletionSnapshot& snap, const exec::RunOutcome& outcome,
                            double probed_cost, exec::CommandRunner& commands) {
  return *Gather(snap, outcome, probed_cost, &commands, 0);
}

std::optional<CompletionFacts> GatherFactsWithoutCommands(const CompletionSnapshot& snap,
                                                          const exec::RunOutcome& outcome,
                                                          double probed_cost, size_t max_read) {
  return Gather(snap, outcome, probed_cost, nullptr, max_read);
}

}  // namespace conclave::service
