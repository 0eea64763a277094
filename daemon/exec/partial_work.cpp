// Contract: see partial_work.h.
#include "exec/partial_work.h"

#include <sstream>

namespace conclave::exec {
namespace {

constexpr int kGitTimeoutMs = 15000;

// The first `max` lines of text, with a count of the rest.
std::string FirstLines(const std::string& text, int max, const std::string& prefix) {
  std::istringstream in(text);
  std::string line, out;
  int n = 0, more = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (n < max) {
      out += prefix + line + "\n";
      ++n;
    } else {
      ++more;
    }
  }
  if (more > 0) out += "... and " + std::to_string(more) + " more\n";
  return out;
}

}  // namespace

std::string DescribePartialWork(CommandRunner& commands, const std::string& cwd,
                                const std::string& base) {
  if (base.empty() || base.find_first_not_of("0123456789abcdef") != std::string::npos) return "";
  CommandResult stat =
      commands.Run({"git", "-C", cwd, "diff", "--stat=120", base, "--"}, "/", kGitTimeoutMs);
  if (stat.exit_code != 0) return "";
  CommandResult untracked = commands.Run(
      {"git", "-C", cwd, "ls-files", "--others", "--exclude-standard"}, "/", kGitTimeoutMs);
  std::string out = FirstLines(stat.out, 60, "  ");
  if (untracked.exit_code == 0) out += FirstLines(untracked.out, 30, "  untracked: ");
  return out.empty() ? "  (no changes)\n" : out;
}

}  // namespace conclave::exec
