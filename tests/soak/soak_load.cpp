#include "soak_load.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace soak {

using bench::Ctx;
using namespace std::chrono_literals;

void DaemonGate::Up() {
  std::lock_guard<std::mutex> l(mu_);
  up_ = true;
  cv_.notify_all();
}

void DaemonGate::Down() {
  std::lock_guard<std::mutex> l(mu_);
  up_ = false;
}

bool DaemonGate::up() const {
  std::lock_guard<std::mutex> l(mu_);
  return up_;
}

bool DaemonGate::WaitUp() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return up_ || stop_.load(); });
  return !stop_.load();
}

void DaemonGate::Stop() {
  std::lock_guard<std::mutex> l(mu_);
  stop_ = true;
  cv_.notify_all();
}

size_t Ledger::outstanding() {
  std::lock_guard<std::mutex> l(mu);
  size_t n = 0;
  for (int64_t t : dispatched) n += ended.count(t) ? 0 : 1;
  return n;
}

std::shared_ptr<grpc::Channel> SoakChannel(const std::string& socket, int distinct) {
  grpc::ChannelArguments args;
  args.SetInt("soak.connection", distinct);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 20);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 20);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 100);
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args);
}

namespace {
std::string Handle(int i) { return "soak-" + std::to_string(i % 4); }
std::string TerminalHandle(int i) { return "soak-t" + std::to_string(i); }
}  // namespace

bool Load::Prepare() {
  auto stub = v1::Conclave::NewStub(SoakChannel(cfg_.socket, 1000));
  for (int i = 0; i < 4; ++i) {
    auto ctx = Ctx(10s);
    v1::RegisterHandleRequest req;
    req.set_name(Handle(i));
    v1::Handle resp;
    grpc::Status s = stub->RegisterHandle(ctx.get(), req, &resp);
    if (!s.ok() && s.error_code() != grpc::StatusCode::ALREADY_EXISTS) {
      std::fprintf(stderr, "soak: RegisterHandle: %s\n", bench::Describe(s).c_str());
      return false;
    }
  }
  for (int i = 0; i < cfg_.terminals; ++i) {
    auto ctx = Ctx(10s);
    v1::CreateTerminalRequest req;
    req.set_profile("soak-fake");
    req.set_handle(TerminalHandle(i));
    req.set_cwd(cfg_.pid_dir + "/../work");
    v1::Terminal resp;
    grpc::Status s = stub->CreateTerminal(ctx.get(), req, &resp);
    if (!s.ok() && s.error_code() != grpc::StatusCode::ALREADY_EXISTS) {
      std::fprintf(stderr, "soak: CreateTerminal: %s\n", bench::Describe(s).c_str());
      return false;
    }
  }
  return true;
}

void Load::Start() {
  threads_.emplace_back([this] { Watcher(); });
  for (int i = 0; i < cfg_.clients; ++i) threads_.emplace_back([this, i] { Client(i); });
}

void Load::Join() {
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void Load::Error(const std::string& rpc, const grpc::Status& s) {
  std::lock_guard<std::mutex> l(ledger_.mu);
  ++ledger_.errors[rpc + "/" + std::to_string(static_cast<int>(s.error_code())) + " " +
                   s.error_message().substr(0, 60)];
}

// What a fake worker does: print and finish, hang until its timeout, leave a grandchild in
// its group or an escapee in a session of its own, print a lot, or fail.
std::string Load::Brief(std::mt19937_64& rng, const std::string& token) const {
  const std::string p = cfg_.pid_dir + "/";
  std::string b = "soak " + token + "\nFAKE: pidfile " + p + "w-" + token + "\n";
  switch (rng() % 6) {
    case 0: return b + "FAKE: print working\nFAKE: sleep 50\n";
    case 1: return b + "FAKE: print stuck\nFAKE: hang\n";
    case 2: return b + "FAKE: grandchild " + p + "g-" + token + "\nFAKE: sleep 100\n";
    case 3: return b + "FAKE: escapee " + p + "e-" + token + "\nFAKE: sleep 100\n";
    case 4: return b + "FAKE: spew 300000\n";
    default: return b + "FAKE: exit 3\n";
  }
}

void Load::Client(int index) {
  auto stub = v1::Conclave::NewStub(SoakChannel(cfg_.socket, index));
  std::mt19937_64 rng(cfg_.seed * 7919 + static_cast<uint64_t>(index));
  int64_t n = 0;
  int64_t cursor = 0;
  while (!quiesce_ && gate_.WaitUp()) {
    if (quiesce_) break;
    if (cfg_.pace_ms > 0) bench::IdleFor(std::chrono::milliseconds(cfg_.pace_ms));
    const int dice = static_cast<int>(rng() % 100);
    const std::string token = "c" + std::to_string(index) + "-" + std::to_string(++n) + "-s" +
                              std::to_string(cfg_.seed);
    grpc::Status s;
    std::string rpc;
    if (dice < 40) {
      rpc = "Send";
      auto ctx = Ctx(10s);
      v1::SendRequest req;
      req.set_to(Handle(static_cast<int>(rng() % 4)));
      req.set_type("status");
      req.set_subject("soak");
      req.set_body("soak " + token);
      v1::SendReply resp;
      s = stub->Send(ctx.get(), req, &resp);
      if (s.ok() && resp.messages_size() == 1) {
        std::lock_guard<std::mutex> l(ledger_.mu);
        ledger_.acked[token] = resp.messages(0).seq();
      }
    } else if (dice < 55) {
      rpc = "Wait";
      auto ctx = Ctx(10s);
      v1::WaitRequest req;
      req.set_to(Handle(index));
      req.set_after_seq(cursor);
      req.set_timeout_ms(20);
      v1::WaitReply resp;
      s = stub->Wait(ctx.get(), req, &resp);
      if (s.ok()) cursor = resp.cursor();
    } else if (dice < 65) {
      rpc = "Inbox";
      auto ctx = Ctx(10s);
      v1::InboxRequest req;
      req.set_to(Handle(index));
      req.set_limit(20);
      v1::MessageList resp;
      s = stub->Inbox(ctx.get(), req, &resp);
    } else if (dice < 72) {
      rpc = "Check";
      auto ctx = Ctx(10s);
      v1::CheckRequest req;
      req.set_handle(Handle(index));
      req.set_limit(20);
      v1::MessageList resp;
      s = stub->Check(ctx.get(), req, &resp);
    } else if (dice < 80) {
      rpc = "GetStatus";
      auto ctx = Ctx(10s);
      v1::StatusReply resp;
      s = stub->GetStatus(ctx.get(), v1::GetStatusRequest(), &resp);
    } else if (dice < 86) {
      rpc = "ListTasks";
      auto ctx = Ctx(10s);
      v1::ListTasksRequest req;
      req.set_status("dispatched");
      req.set_limit(50);
      v1::ListTasksReply resp;
      s = stub->ListTasks(ctx.get(), req, &resp);
    } else if (dice < 92) {
      rpc = "ListTerminals";
      auto ctx = Ctx(10s);
      v1::ListTerminalsReply resp;
      s = stub->ListTerminals(ctx.get(), v1::ListTerminalsRequest(), &resp);
    } else {
      if (ledger_.outstanding() >= cfg_.max_outstanding) continue;
      rpc = "CreateTask";
      auto ctx = Ctx(10s);
      v1::CreateTaskRequest req;
      req.set_brief(Brief(rng, token));
      req.set_title("soak " + token);
      v1::CreateTaskReply resp;
      s = stub->CreateTask(ctx.get(), req, &resp);
      if (s.ok()) {
        rpc = "Dispatch";
        auto dctx = Ctx(10s);
        v1::DispatchRequest dreq;
        dreq.set_task_id(resp.task().id());
        dreq.set_to(TerminalHandle(static_cast<int>(rng() % cfg_.terminals)));
        v1::DispatchInfo info;
        s = stub->Dispatch(dctx.get(), dreq, &info);
        if (s.ok()) {
          std::lock_guard<std::mutex> l(ledger_.mu);
          ledger_.dispatched.insert(resp.task().id());
        }
      }
    }
    ++ledger_.ops;
    if (!s.ok()) Error(rpc, s);
  }
}

// Follows the daemon's worker_done messages; a task has ended at the one with will_retry
// false. Resumes from its cursor after a restart (seqs are durable).
void Load::Watcher() {
  auto stub = v1::Conclave::NewStub(SoakChannel(cfg_.socket, 999));
  int64_t cursor = 0;
  while (gate_.WaitUp()) {
    auto ctx = Ctx(10s);
    v1::WaitRequest req;
    req.add_types("worker_done");
    req.set_from("conclaved");
    req.set_after_seq(cursor);
    req.set_timeout_ms(2000);
    req.set_limit(1000);
    v1::WaitReply resp;
    grpc::Status s = stub->Wait(ctx.get(), req, &resp);
    if (!s.ok()) continue;  // the daemon is down: WaitUp blocks until it is back
    cursor = resp.cursor();
    bool any = false;
    for (const auto& m : resp.messages()) {
      auto payload = nlohmann::json::parse(m.payload_json(), nullptr, false);
      if (payload.is_object() && payload.value("will_retry", true) == false) {
        std::lock_guard<std::mutex> l(ledger_.mu);
        ledger_.ended.insert(m.task_id());
        any = true;
      }
    }
    if (any) {
      std::lock_guard<std::mutex> l(ended_mu_);
      ended_cv_.notify_all();
    }
  }
}

bool Load::WaitAllEnded(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> l(ended_mu_);
  while (ledger_.outstanding() > 0) {
    if (ended_cv_.wait_until(l, deadline) == std::cv_status::timeout) {
      return ledger_.outstanding() == 0;
    }
  }
  return true;
}

}  // namespace soak
