// Integration: the loop's poll of gRPC's queue before it sleeps (config loop_poll_us;
// api/queue_loop.h) in a real daemon, read from GetStatus's count loop_polls. A lone client
// calling over the daemon's own unix socket makes it poll; calls on more than two connections
// in turn, or a worker running, keep it from polling, and it polls again once they are gone.
// Each wait for a poll gives up after a minute of calls and fails.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "conclave/v1/conclave.grpc.pb.h"
#include "daemon_fixture.h"
#include "worker_waits.h"

namespace {

namespace v1 = conclave::v1;
using conclave::testing::DaemonFixture;
using namespace std::chrono_literals;

// A client with a connection of its own: a distinct channel argument keeps gRPC from sharing one.
std::unique_ptr<v1::Conclave::Stub> Client(const DaemonFixture& d, int n) {
  grpc::ChannelArguments args;
  args.SetInt("test.connection", n);
  return v1::Conclave::NewStub(grpc::CreateCustomChannel(
      "unix:" + d.socket(), grpc::InsecureChannelCredentials(), args));
}

// Calls GetStatus; the loop's polls as its reply counts them.
int64_t Polls(v1::Conclave::Stub& stub) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 10s);
  v1::StatusReply reply;
  const grpc::Status s = stub.GetStatus(&ctx, v1::GetStatusRequest(), &reply);
  INFO(s.error_message());
  REQUIRE(s.ok());
  REQUIRE(reply.counts().count("loop_polls") == 1);
  return reply.counts().at("loop_polls");
}

// A lone client calls until the loop has polled since `since`; false after a minute of calls.
bool PollsAgain(v1::Conclave::Stub& lone, int64_t since) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Polls(lone) > since) return true;
  }
  return false;
}

// A daemon whose loop polls for up to 1 ms: a spell up to 4 ms long ended by a call earns it
// credit, which a lone client's calls give it even on a loaded machine.
void StartPolling(DaemonFixture& d) {
  d.WriteProfile("fake", d.FakeProfile("fake", "fam"));
  d.Start({"--config", d.WriteFile("config.json", R"({"loop_poll_us": 1000})")});
}

}  // namespace

TEST_CASE("a lone client makes the daemon's loop poll and clients on many connections do not",
          "[loop-poll]") {
  DaemonFixture d;
  StartPolling(d);
  auto lone = Client(d, 0);
  CHECK(PollsAgain(*lone, Polls(*lone)));
  // Four more in turn: once the loop has heard from them, the last 16 requests came on more
  // than two connections, and it sleeps whenever it is idle, until the lone client alone calls.
  std::vector<std::unique_ptr<v1::Conclave::Stub>> many;
  for (int i = 0; i < 4; ++i) many.push_back(Client(d, 10 + i));
  for (int i = 0; i < 3; ++i) Polls(*many[i]);
  const int64_t before = Polls(*many[3]);
  for (int i = 0; i < 400; ++i) Polls(*many[i % 4]);
  CHECK(Polls(*many[0]) == before);
  CHECK(PollsAgain(*lone, before));
}

TEST_CASE("a worker running keeps the daemon's loop from polling however a lone client calls",
          "[loop-poll]") {
  DaemonFixture d;
  StartPolling(d);
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  const std::string task = d.CliJson({"task", "create", "--brief", "-"},
                                     "FAKE: wait-file " + d.dir() + "/go\n")["task"]["id"];
  REQUIRE(d.CliJson({"dispatch", "--task", task, "--to", "w1"})["state"] == "running");
  auto lone = Client(d, 0);
  const int64_t before = Polls(*lone);
  for (int i = 0; i < 400; ++i) Polls(*lone);
  CHECK(Polls(*lone) == before);
  d.WriteFile("go", "");
  namespace waits = conclave::testing::waits;
  CHECK(waits::Payload(waits::WaitDone(d, task))["outcome"] == "succeeded");
  CHECK(PollsAgain(*lone, before));
}
