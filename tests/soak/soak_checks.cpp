#include "soak_checks.h"

#include <dirent.h>
#include <poll.h>
#include <sqlite3.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace soak {

namespace {

struct Db {
  sqlite3* db = nullptr;
  ~Db() { sqlite3_close(db); }
};

// Runs sql, calling row for each result row; returns "" or the error.
template <typename F>
std::string Query(sqlite3* db, const std::string& sql, F row) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    return std::string("prepare: ") + sqlite3_errmsg(db);
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(st);
  std::string err = rc == SQLITE_DONE ? "" : std::string("step: ") + sqlite3_errmsg(db);
  sqlite3_finalize(st);
  return err;
}

std::string Text(sqlite3_stmt* st, int col) {
  const unsigned char* t = sqlite3_column_text(st, col);
  return t ? reinterpret_cast<const char*>(t) : "";
}

}  // namespace

void StoreCheck::Run(Ledger& ledger, bool all_ended, std::vector<std::string>& problems) {
  Db db;
  // Read-write open (not read-only): a WAL database left by a killed daemon needs its -shm
  // rebuilt, which a read-only connection may not do. Nothing is written, and closing must not
  // checkpoint: the next daemon has to start on the WAL the crash left, as it would for real.
  if (sqlite3_open_v2(db_path_.c_str(), &db.db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    problems.push_back("cannot open " + db_path_);
    return;
  }
  sqlite3_db_config(db.db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  sqlite3_busy_timeout(db.db, 5000);
  std::string integrity;
  std::string err = Query(db.db, "PRAGMA integrity_check", [&](sqlite3_stmt* st) {
    integrity += Text(st, 0);
  });
  if (!err.empty() || integrity != "ok") problems.push_back("integrity_check: " + integrity + err);

  err = Query(db.db,
              "SELECT seq, body FROM messages WHERE seq > " + std::to_string(last_seq_) +
                  " AND type = 'status' AND subject = 'soak' ORDER BY seq",
              [&](sqlite3_stmt* st) {
                int64_t seq = sqlite3_column_int64(st, 0);
                std::string body = Text(st, 1);
                last_seq_ = std::max(last_seq_, seq);
                if (body.rfind("soak ", 0) != 0) return;
                std::string token = body.substr(5);
                if (!seen_.emplace(token, seq).second) {
                  problems.push_back("message " + token + " stored twice (seq " +
                                     std::to_string(seen_[token]) + " and " +
                                     std::to_string(seq) + ")");
                }
              });
  if (!err.empty()) problems.push_back("messages: " + err);

  // Final worker_done per task: never two; with all_ended, one for every dispatched task.
  std::map<int64_t, int> finals;
  end_states_.clear();
  err = Query(db.db,
              "SELECT task_id, payload FROM messages WHERE type = 'worker_done' AND "
              "sender = 'conclaved'",
              [&](sqlite3_stmt* st) {
                auto p = nlohmann::json::parse(Text(st, 1), nullptr, false);
                if (!p.is_object() || p.value("will_retry", true)) return;
                ++finals[sqlite3_column_int64(st, 0)];
                std::string kind = p.value("state", std::string("?"));
                std::string fk = p.value("failure_kind", std::string());
                ++end_states_[fk.empty() ? kind : kind + "/" + fk];
              });
  if (!err.empty()) problems.push_back("worker_done: " + err);

  std::lock_guard<std::mutex> l(ledger.mu);
  for (const auto& [token, seq] : ledger.acked) {
    auto it = seen_.find(token);
    if (it == seen_.end()) {
      problems.push_back("acknowledged message " + token + " (seq " + std::to_string(seq) +
                         ") is missing");
    } else if (it->second != seq) {
      problems.push_back("message " + token + " acknowledged as seq " + std::to_string(seq) +
                         " but stored as " + std::to_string(it->second));
    }
  }
  for (const auto& [task, n] : finals) {
    if (n > 1) problems.push_back("task " + std::to_string(task) + " ended " + std::to_string(n) +
                                  " times");
  }
  if (all_ended) {
    for (int64_t task : ledger.dispatched) {
      if (!finals.count(task)) problems.push_back("task " + std::to_string(task) + " never ended");
    }
  }
}

int64_t StartTime(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  size_t close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) return std::stoll(field);
  }
  return 0;
}

std::vector<WorkerPid> ReadPidFiles(const std::string& dir) {
  std::vector<WorkerPid> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < 3 || name[1] != '-') continue;
    std::ifstream in(dir + "/" + name);  // one pid per line: every attempt of the task
    pid_t pid = 0;
    while (in >> pid) {
      // With the start time of the process alive now (0: gone): a pid recycled later is not it.
      if (pid > 0) out.push_back({name, pid, StartTime(pid)});
    }
  }
  closedir(d);
  return out;
}

bool IsLiveWorker(pid_t pid, int64_t start_time) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return false;
  char state = line[close + 2];
  if (state == 'Z' || state == 'X') return false;
  if (start_time == 0 || StartTime(pid) != start_time) return false;
  std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline");
  std::stringstream ss;
  ss << cmd.rdbuf();
  return ss.str().find("fake_worker") != std::string::npos;
}

std::vector<WorkerPid> Survivors(const std::vector<WorkerPid>& pids,
                                 std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  std::vector<WorkerPid> out;
  for (const auto& w : pids) {
    if (!IsLiveWorker(w.pid, w.start_time)) continue;
    int fd = static_cast<int>(syscall(SYS_pidfd_open, w.pid, 0));
    if (fd < 0) continue;  // gone
    // Readable once the process exits (a zombie counts as exited).
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fd, POLLIN, 0};
      int rc = poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0 && IsLiveWorker(w.pid, w.start_time)) out.push_back(w);
      break;
    }
    close(fd);
  }
  return out;
}

int FdCount(pid_t pid) {
  int n = 0;
  DIR* d = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (!d) return -1;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

}  // namespace soak
