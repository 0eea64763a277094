// Benchmark: how fast a committed message wakes a long-polling Wait, over the real socket.
// Starts its own conclaved on a temporary state dir, then N times: a client blocks in Wait,
// another sends a matching message; measures send-acknowledged → Wait-returned and the whole
// send → wake path. Prints median and p99; asserts nothing.
//   wait_latency_bench CONCLAVED [iterations=200]
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "conclave/v1/conclave.grpc.pb.h"

namespace v1 = conclave::v1;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CONCLAVED [iterations]\n", argv[0]);
    return 2;
  }
  int n = argc > 2 ? std::atoi(argv[2]) : 200;
  char tmpl[] = "/tmp/cvbXXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string sock = dir + "/s.sock";
  std::vector<std::string> args = {argv[1], "--state-dir", dir + "/st", "--listen", "unix:" + sock,
                                   "--profiles", dir, "--log-level", "warn"};
  std::vector<char*> av;
  for (auto& a : args) av.push_back(a.data());
  av.push_back(nullptr);
  pid_t daemon;
  extern char** environ;
  if (posix_spawn(&daemon, argv[1], nullptr, nullptr, av.data(), environ) != 0) return 1;

  for (int i = 0; i < 500 && access(sock.c_str(), F_OK) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto channel = grpc::CreateChannel("unix:" + sock, grpc::InsecureChannelCredentials());
  auto stub = v1::Conclave::NewStub(channel);
  for (int i = 0; i < 200; ++i) {
    grpc::ClientContext ctx;
    v1::StatusReply st;
    if (stub->GetStatus(&ctx, v1::GetStatusRequest(), &st).ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  {
    grpc::ClientContext ctx;
    v1::RegisterHandleRequest req;
    req.set_name("bench");
    v1::Handle h;
    stub->RegisterHandle(&ctx, req, &h);
  }
  std::vector<double> wake_ms, total_ms;
  for (int i = 0; i < n; ++i) {
    grpc::ClientContext sctx;
    v1::StatusReply st;
    stub->GetStatus(&sctx, v1::GetStatusRequest(), &st);
    int64_t head = st.last_seq();
    auto waiter = std::async(std::launch::async, [&] {
      grpc::ClientContext ctx;
      v1::WaitRequest req;
      req.set_to("bench");
      req.set_after_seq(head);
      req.set_timeout_ms(10000);
      v1::WaitReply r;
      stub->Wait(&ctx, req, &r);
      return Clock::now();
    });
    // Let the waiter register (a waiter count of 1 in status).
    for (;;) {
      grpc::ClientContext c;
      v1::StatusReply s;
      auto status = stub->GetStatus(&c, v1::GetStatusRequest(), &s);
      if (!status.ok()) {
        std::fprintf(stderr, "status failed: %s\n", status.error_message().c_str());
        return 1;
      }
      auto it = s.counts().find("waiters");
      if (it != s.counts().end() && it->second >= 1) break;
    }
    auto sent = Clock::now();
    grpc::ClientContext ctx;
    v1::SendRequest req;
    req.set_to("bench");
    req.set_type("status");
    req.set_subject("ping");
    v1::SendReply r;
    stub->Send(&ctx, req, &r);
    auto acked = Clock::now();
    auto woke = waiter.get();
    wake_ms.push_back(std::chrono::duration<double, std::milli>(woke - acked).count());
    total_ms.push_back(std::chrono::duration<double, std::milli>(woke - sent).count());
  }
  kill(daemon, SIGTERM);
  waitpid(daemon, nullptr, 0);
  auto pct = [](std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
  };
  std::printf("%d wake-ups over a unix socket\n", n);
  std::printf("send issued -> waiter woken:  median %.3f ms  p99 %.3f ms\n", pct(total_ms, 0.5),
              pct(total_ms, 0.99));
  std::printf("send acked  -> waiter woken:  median %.3f ms  p99 %.3f ms (negative = woke first)\n",
              pct(wake_ms, 0.5), pct(wake_ms, 0.99));
  std::string rm = "rm -rf " + dir;
  return std::system(rm.c_str()) == 0 ? 0 : 0;
}
