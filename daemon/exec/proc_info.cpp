#include "exec/proc_info.h"

#include <signal.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace conclave::exec {

int64_t ReadProcStartTime(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  // comm (field 2) may hold spaces and parentheses: fields resume after the last ')'.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  // After ')' come fields 3..; starttime is field 22, i.e. the 20th token here.
  for (int i = 3; i <= 22; ++i) {
    if (!(rest >> field)) return 0;
  }
  int64_t v = 0;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  return ec == std::errc() && end == field.data() + field.size() ? v : 0;
}

bool ProcessGroupAlive(pid_t pgid) { return pgid > 0 && kill(-pgid, 0) == 0; }

void SignalGroup(pid_t pgid, int sig) {
  if (pgid > 1) kill(-pgid, sig);
}

bool SameProcess(pid_t pid, int64_t expected_start_time) {
  if (pid <= 1 || expected_start_time == 0) return false;
  return ReadProcStartTime(pid) == expected_start_time;
}

}  // namespace conclave::exec
