#include "bench_support.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

extern char** environ;

namespace bench {

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double rank = p / 100.0 * (v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(rank));
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - lo);
}

namespace {

// utime + stime (µs) and the name of a /proc stat file: a process's or one of its threads'.
double StatCpuMicros(const std::string& path, std::string* comm = nullptr) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t open = s.find('('), close = s.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return 0;
  if (comm) *comm = s.substr(open + 1, close - open - 1);
  std::istringstream fields(s.substr(close + 2));
  std::string f;
  double utime = 0, stime = 0;
  // Fields after "(comm) ": state is field 3; utime is 14, stime 15.
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::strtod(f.c_str(), nullptr);
    if (i == 15) stime = std::strtod(f.c_str(), nullptr);
  }
  return (utime + stime) * 1e6 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace

double ProcessCpuMicros(pid_t pid) {
  return StatCpuMicros("/proc/" + std::to_string(pid) + "/stat");
}

std::map<pid_t, ThreadSample> SampleThreads(pid_t pid) {
  std::map<pid_t, ThreadSample> out;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
    const std::string dir = t.path().string();
    ThreadSample sample;
    StatCpuMicros(dir + "/stat", &sample.name);
    std::ifstream sched(dir + "/schedstat");
    double ns = -1;
    if (sample.name.empty() || !(sched >> ns)) continue;  // ended meanwhile
    sample.cpu_us = ns / 1000;
    std::ifstream status(dir + "/status");
    std::string line;
    bool counted = false;
    while (std::getline(status, line)) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) {
        sample.sleeps = std::strtod(line.c_str() + 24, nullptr);
        counted = true;
      }
    }
    if (!counted) continue;  // ended between its files
    const pid_t tid = static_cast<pid_t>(std::strtol(t.path().filename().c_str(), nullptr, 10));
    if (tid == pid) sample.name = kLoopThread;
    out[tid] = sample;
  }
  return out;
}

std::map<std::string, ThreadSample> ThreadsSince(const std::map<pid_t, ThreadSample>& before,
                                                 const std::map<pid_t, ThreadSample>& after) {
  std::map<std::string, ThreadSample> by_name;
  for (const auto& [tid, now] : after) {
    ThreadSample& sum = by_name[now.name];
    sum.name = now.name;
    auto was = before.find(tid);
    const bool same = was != before.end() && was->second.name == now.name;
    sum.cpu_us += now.cpu_us - (same ? was->second.cpu_us : 0.0);
    sum.sleeps += now.sleeps - (same ? was->second.sleeps : 0.0);
  }
  return by_name;
}

double CpuSince(const std::map<pid_t, ThreadSample>& before, pid_t pid) {
  double us = 0;
  for (const auto& [name, part] : ThreadsSince(before, SampleThreads(pid))) us += part.cpu_us;
  return us;
}

double ThreadSleeps() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return static_cast<double>(u.ru_nvcsw);
}

HostTicks ReadHostTicks() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  HostTicks t;
  if (!(in >> cpu) || cpu != "cpu") return t;
  // user nice system idle iowait irq softirq steal (guest time is inside user and nice).
  for (int i = 0; i < 8; ++i) {
    double v = 0;
    if (!(in >> v)) break;
    t.total += v;
    if (i == 7) t.steal = v;
  }
  return t;
}

double StealPercent(const HostTicks& from, const HostTicks& to) {
  double total = to.total - from.total;
  return total > 0 ? (to.steal - from.steal) / total * 100.0 : 0;
}

double ProcessRssMiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  return 0;
}

double ThreadCpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

void IdleFor(std::chrono::milliseconds d) {
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lk(mu);
  auto until = Clock::now() + d;
  while (cv.wait_until(lk, until) != std::cv_status::timeout) {
  }
}

namespace {

int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

void PidfdSignal(int pidfd, int sig) { syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0); }

// Whether the process behind pidfd ended before deadline.
bool PidfdWait(int pidfd, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{pidfd, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
    if (r == 1) return true;
    if (r == 0 || errno != EINTR) return false;
  }
}

}  // namespace

namespace {

// Both never destroyed: the atexit handler below may run after function-local statics end.
std::mutex& LiveMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}

std::set<Child*>& LiveChildren() {
  static auto* live = new std::set<Child*>;
  return *live;
}

}  // namespace

void Child::Register() {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit([] { Child::ReleaseAll(); }); });
  std::lock_guard<std::mutex> lock(LiveMutex());
  LiveChildren().insert(this);
}

// Under the registry's lock, as ~Child's Release: a Child destroyed on another thread meanwhile
// is either released here (before its destructor goes on) or already gone from the set.
void Child::ReleaseAll() {
  std::lock_guard<std::mutex> lock(LiveMutex());
  for (Child* c : LiveChildren()) c->Release();
  LiveChildren().clear();
}

Child::Child() { Register(); }

Child::Child(const std::vector<std::string>& argv, const std::string& log_path) {
  Register();
  std::vector<char*> av;
  for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!log_path.empty()) {
    posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  }
  pid_t pid = -1;
  if (posix_spawn(&pid, av[0], &fa, nullptr, av.data(), environ) == 0) pid_ = pid;
  posix_spawn_file_actions_destroy(&fa);
}

Child::~Child() {
  std::lock_guard<std::mutex> lock(LiveMutex());
  LiveChildren().erase(this);
  Release();
}

Child::Child(Child&& o) noexcept : pid_(o.pid_), served_(o.served_), served_fd_(o.served_fd_) {
  o.pid_ = o.served_ = o.served_fd_ = -1;
  Register();
}

Child& Child::operator=(Child&& o) noexcept {
  if (this != &o) {
    Release();
    pid_ = o.pid_;
    served_ = o.served_;
    served_fd_ = o.served_fd_;
    o.pid_ = o.served_ = o.served_fd_ = -1;
  }
  return *this;
}

void Child::Release() {
  if (served_fd_ >= 0) PidfdSignal(served_fd_, SIGKILL);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int st;
    waitpid(pid_, &st, 0);
  }
  if (served_fd_ >= 0) {
    // Not this process's child: its end is seen on the pidfd (a next start may need its lock).
    PidfdWait(served_fd_, Clock::now() + std::chrono::seconds(10));
    close(served_fd_);
  }
  pid_ = served_ = served_fd_ = -1;
}

namespace {

// The process's arguments, NUL-separated ("" when it is not there).
std::string CmdlineOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// When the process started, in clock ticks since boot (field 22 of /proc/PID/stat); -1 if
// it is not there.
long long StartTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = s.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(s.substr(close + 2));
  std::string f;
  for (int i = 3; i <= 22 && fields >> f; ++i) {
    if (i == 22) return std::strtoll(f.c_str(), nullptr, 10);
  }
  return -1;
}

}  // namespace

Child::Served Child::AdoptServed(pid_t pid, const std::string& socket) {
  if (served_fd_ >= 0) close(served_fd_);
  served_ = served_fd_ = -1;
  if (pid > 0 && pid == pid_) return Served::kSame;
  // The pidfd first: what is read below is then of the process it holds, as long as that
  // process is still running afterwards (its pid cannot have been reused meanwhile).
  int fd = pid > 0 ? PidfdOpen(pid) : -1;
  if (fd < 0) return Served::kNotOurs;
  const bool listens = CmdlineOf(pid).find("unix:" + socket + '\0') != std::string::npos;
  const long long started = StartTicks(pid), spawned = StartTicks(pid_);
  pollfd p{fd, POLLIN, 0};
  const bool running = poll(&p, 1, 0) == 0;
  if (!listens || !running || started < 0) {
    close(fd);
    return Served::kNotOurs;
  }
  if (spawned >= 0 && started < spawned) {
    close(fd);
    return Served::kPrevious;
  }
  served_ = pid;
  served_fd_ = fd;
  return Served::kAdopted;
}

int Child::Stop(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  const auto deadline = Clock::now() + timeout;
  int pidfd = PidfdOpen(pid_);
  // The served process ends first; a wrapper that waits for it ends with it.
  if (served_fd_ >= 0) {
    PidfdSignal(served_fd_, SIGTERM);
  } else {
    kill(pid_, SIGTERM);
  }
  bool ended = pidfd < 0 || PidfdWait(pidfd, deadline);
  if (ended && served_fd_ >= 0) ended = PidfdWait(served_fd_, deadline);
  if (!ended) {
    if (served_fd_ >= 0) PidfdSignal(served_fd_, SIGKILL);
    kill(pid_, SIGKILL);
  }
  if (pidfd >= 0) close(pidfd);
  int st = -1;
  waitpid(pid_, &st, 0);
  pid_ = -1;
  if (served_fd_ >= 0) {
    if (!ended) PidfdWait(served_fd_, Clock::now() + std::chrono::seconds(10));
    close(served_fd_);
  }
  served_ = served_fd_ = -1;
  return st;
}

std::shared_ptr<grpc::Channel> UnixChannel(const std::string& socket, int distinct) {
  grpc::ChannelArguments args;
  // A distinct argument gives each channel its own connection, as separate clients have.
  args.SetInt("bench.connection", distinct);
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args);
}

std::unique_ptr<v1::Conclave::Stub> Stub(const std::string& socket, int distinct) {
  return v1::Conclave::NewStub(UnixChannel(socket, distinct));
}

std::unique_ptr<grpc::ClientContext> Ctx(std::chrono::milliseconds timeout) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + timeout);
  return ctx;
}

bool WaitUntilServing(const std::string& socket, std::chrono::milliseconds timeout,
                      pid_t* served) {
  // Its own subchannel, retrying the connection every few ms (gRPC's default backoff starts
  // at 1 s, which would be measured as startup time); the call waits for the connection.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 1);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 1);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5);
  auto channel =
      grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args);
  auto stub = v1::Conclave::NewStub(channel);
  auto until = Clock::now() + timeout;
  while (Clock::now() < until) {
    grpc::ClientContext ctx;
    ctx.set_wait_for_ready(true);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
    v1::GetStatusRequest req;
    v1::StatusReply resp;
    if (stub->GetStatus(&ctx, req, &resp).ok()) {
      if (served) *served = resp.pid();
      return true;
    }
  }
  return false;
}

double Daemon::Start() {
  std::filesystem::create_directories(dir + "/work");
  auto t0 = Clock::now();
  proc = Child({bin, "--state-dir", state_dir(), "--listen", "unix:" + socket(), "--profiles",
                dir + "/profiles", "--log-level", "warn"},
               dir + "/daemon.log");
  pid_t served = -1;
  if (!WaitUntilServing(socket(), std::chrono::seconds(120), &served)) {
    std::fprintf(stderr, "bench: conclaved did not answer on %s (see %s/daemon.log)\n",
                 socket().c_str(), dir.c_str());
    std::exit(1);
  }
  const double took = SecondsSince(t0);
  // A --daemon wrapper may not exec conclaved: its figures and signals then belong to the
  // process that answers.
  switch (proc.AdoptServed(served, socket())) {
    case Child::Served::kSame:
    case Child::Served::kAdopted:
      break;
    case Child::Served::kPrevious:
      std::fprintf(stderr, "bench: pid %d answering on %s started before this start (pid %d): "
                           "a previous conclaved still runs\n", served, socket().c_str(),
                   proc.spawned_pid());
      std::exit(1);
    case Child::Served::kNotOurs:
      std::fprintf(stderr, "bench: pid %d (from GetStatus) is not a conclaved on %s here; "
                           "measuring pid %d\n", served, socket().c_str(), proc.spawned_pid());
      break;
  }
  if (proc.pid() != proc.spawned_pid()) {
    std::fprintf(stderr, "bench: conclaved pid %d serves %s (started through pid %d)\n",
                 proc.pid(), socket().c_str(), proc.spawned_pid());
  } else {
    std::fprintf(stderr, "bench: conclaved pid %d serves %s\n", proc.pid(), socket().c_str());
  }
  return took;
}

void Daemon::StartNew(const std::string& binary, const std::string& directory) {
  bin = binary;
  dir = directory;
  WriteBenchProfiles(dir + "/profiles");
  Start();
}

std::string BenchTrueProfile(const std::string& name, const std::string& command) {
  return R"({
  "name": ")" + name + R"(", "family": "local", "type": "command",
  "command": )" + command + R"(, "brief": "arg", "parser": "text", "contract": false,
  "timeout_s": 60, "idle_timeout_s": 0, "max_concurrent": 16
})";
}

void WriteBenchProfiles(const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/bench-true.json") << BenchTrueProfile("bench-true", R"(["/bin/true"])");
  std::ofstream(dir + "/bench-8m.json") << R"({
  "name": "bench-8m", "family": "local", "type": "command",
  "command": ["/bin/sh", "-c", "head -c 8388608 /dev/zero | tr '\\000' x; echo; date +%s%N > f.txt && git add f.txt && git -c user.name=bench -c user.email=bench@localhost commit -qm bench && printf 'SUMMARY: done\\nEVIDENCE: bench\\nCHANGES:\\n- f.txt\\nRISKS: none\\nBLOCKERS: none\\n'"],
  "brief": "arg", "parser": "text", "contract": false,
  "timeout_s": 120, "idle_timeout_s": 0, "max_concurrent": 16
})";
}

std::string MakeTempDir(const std::string& tag) {
  std::string t = "/tmp/cvb-" + tag + "-XXXXXX";
  std::vector<char> buf(t.begin(), t.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  return buf.data();
}

std::string Describe(const grpc::Status& s) {
  return s.ok() ? "ok" : std::to_string(s.error_code()) + " " + s.error_message();
}

Row& Table::Add(const std::string& path, const std::string& unit, const std::string& bare_label,
                bool higher_is_better) {
  rows_.push_back(Row{path, unit, {}, {}, bare_label, higher_is_better});
  return rows_.back();
}

Row& Table::Get(const std::string& path, const std::string& unit, const std::string& bare_label,
                bool higher_is_better) {
  for (auto& r : rows_) {
    if (r.path == path) return r;
  }
  return Add(path, unit, bare_label, higher_is_better);
}

namespace {
std::string Fmt(double v) {
  char buf[32];
  double a = std::fabs(v);
  if (a >= 1000) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (a >= 100) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (a >= 10) {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  } else if (a >= 0.1 || a == 0) {
    std::snprintf(buf, sizeof buf, "%.2f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f", v);  // 0.055, not 0.05: the ratio stays checkable
  }
  return buf;
}

std::string Triple(const std::vector<double>& v, const std::string& unit) {
  if (v.empty()) return "—";
  auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  return Fmt(*mn) + " / **" + Fmt(Percentile(v, 50)) + "** / " + Fmt(*mx) + " " + unit;
}
}  // namespace

std::string Table::Markdown() const {
  std::string out =
      "| path | Conclave min / **median** / max | bare baseline min / **median** / max | ratio "
      "(medians) |\n|---|---|---|---|\n";
  for (const auto& r : rows_) {
    std::string ratio = "—";
    if (!r.bare.empty() && !r.conclave.empty()) {
      double c = Percentile(r.conclave, 50), b = Percentile(r.bare, 50);
      if (b != 0) ratio = Fmt(c / b) + "×";
    }
    std::string bare = r.bare.empty() ? "—" : r.bare_label + ": " + Triple(r.bare, r.unit);
    out += "| " + r.path + " | " + Triple(r.conclave, r.unit) + " | " + bare + " | " + ratio +
           " |\n";
  }
  return out;
}

}  // namespace bench
