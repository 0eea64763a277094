// Integration: what an editor plugin or a gRPC tool meets first — grpc.health.v1.Health and
// server reflection over the daemon's socket, NOT_SERVING when shutdown begins or the store
// refuses writes (and the client printing the daemon's own UNAVAILABLE as itself, exit 1),
// and FollowTranscript streaming a live transcript.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>

#include "conclave/v1/conclave.grpc.pb.h"
#include "daemon_fixture.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "streaming_child.h"

using conclave::testing::DaemonFixture;
using conclave::testing::RunResult;
using conclave::testing::StreamingChild;
using conclave::testing::WaitFor;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::shared_ptr<grpc::Channel> Channel(const DaemonFixture& d) {
  return grpc::CreateChannel("unix:" + d.socket(), grpc::InsecureChannelCredentials());
}

void Deadline(grpc::ClientContext* ctx, std::chrono::seconds s) {
  ctx->set_deadline(std::chrono::system_clock::now() + s);
}

// Health/Check of one service name; the gRPC status code when the call itself fails.
std::pair<grpc::StatusCode, HealthCheckResponse::ServingStatus> Check(const DaemonFixture& d,
                                                                      const std::string& service) {
  auto stub = grpc::health::v1::Health::NewStub(Channel(d));
  grpc::ClientContext ctx;
  Deadline(&ctx, 10s);
  HealthCheckRequest req;
  req.set_service(service);
  HealthCheckResponse resp;
  grpc::Status s = stub->Check(&ctx, req, &resp);
  return {s.error_code(), resp.status()};
}

bool Alive(pid_t pid) {
  std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(st, line);
  auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

std::string Id(const json& j) { return j.get<std::string>(); }

}  // namespace

TEST_CASE("Health/Check says SERVING and reflection lists conclave.v1.Conclave over the socket",
          "[plugin]") {
  DaemonFixture d;
  d.Start();
  for (const std::string service : {"", "conclave.v1.Conclave"}) {
    auto [code, status] = Check(d, service);
    INFO("service '" << service << "'");
    CHECK(code == grpc::StatusCode::OK);
    CHECK(status == HealthCheckResponse::SERVING);
  }
  CHECK(Check(d, "no.such.Service").first == grpc::StatusCode::NOT_FOUND);

  namespace refl = grpc::reflection::v1alpha;
  auto stub = refl::ServerReflection::NewStub(Channel(d));
  grpc::ClientContext ctx;
  Deadline(&ctx, 10s);
  auto stream = stub->ServerReflectionInfo(&ctx);
  refl::ServerReflectionRequest req;
  req.set_list_services("");
  REQUIRE(stream->Write(req));
  refl::ServerReflectionResponse resp;
  REQUIRE(stream->Read(&resp));
  std::set<std::string> names;
  for (const auto& s : resp.list_services_response().service()) names.insert(s.name());
  CHECK(names.count("conclave.v1.Conclave") == 1);
  CHECK(names.count("grpc.health.v1.Health") == 1);
  // The API's own descriptor is served: a tool needs no copy of the proto.
  req.Clear();
  req.set_file_containing_symbol("conclave.v1.Conclave.FollowTranscript");
  REQUIRE(stream->Write(req));
  REQUIRE(stream->Read(&resp));
  REQUIRE(resp.file_descriptor_response().file_descriptor_proto_size() >= 1);
  google::protobuf::FileDescriptorProto file;
  REQUIRE(file.ParseFromString(resp.file_descriptor_response().file_descriptor_proto(0)));
  CHECK(file.name() == "conclave/v1/conclave.proto");
  stream->WritesDone();
  CHECK(stream->Finish().ok());
}

TEST_CASE(
    "shutdown: Health/Watch sees NOT_SERVING at once, and the daemon's own UNAVAILABLE "
    "prints as itself with exit 1 (not 3)",
    "[plugin]") {
  DaemonFixture d;
  d.WriteProfile("fake", d.FakeProfile("fake", "fakefam"));
  // A worker that ignores SIGTERM holds the shutdown open for kill_grace_ms: the window in
  // which the daemon still answers, refusing work.
  d.Start({"--config", d.WriteFile("config.json", R"({"kill_grace_ms": 8000})")});
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string task =
      Id(d.CliJson({"task", "create", "--brief", "-"},
                   "FAKE: write started.txt yes\nFAKE: hang stubborn\n")["task"]["id"]);
  d.CliJson({"dispatch", "--task", task, "--to", "w1"});
  REQUIRE(WaitFor([&] { return std::filesystem::exists(d.dir() + "/started.txt"); }, 20s));

  auto stub = grpc::health::v1::Health::NewStub(Channel(d));
  grpc::ClientContext ctx;
  Deadline(&ctx, 60s);
  HealthCheckRequest req;
  req.set_service("conclave.v1.Conclave");
  auto watch = stub->Watch(&ctx, req);
  HealthCheckResponse resp;
  REQUIRE(watch->Read(&resp));
  CHECK(resp.status() == HealthCheckResponse::SERVING);

  REQUIRE(kill(d.pid(), SIGTERM) == 0);
  REQUIRE(watch->Read(&resp));
  CHECK(resp.status() == HealthCheckResponse::NOT_SERVING);
  // NOT_SERVING came before the server's shutdown: the daemon still answers, and says why it
  // refuses.
  CHECK(Alive(d.pid()));
  CHECK(Check(d, "").second == HealthCheckResponse::NOT_SERVING);
  RunResult r = d.Cli({"status"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("unavailable: conclaved is shutting down") != std::string::npos);
  RunResult rj = d.Cli({"--json", "status"});
  CHECK(rj.exit_code == 1);
  CHECK(json::parse(rj.out)["error"]["unreachable"] == false);
  CHECK(Alive(d.pid()));  // all of it inside the window

  CHECK(d.Stop() == 0);
  while (watch->Read(&resp)) {
    CHECK(resp.status() != HealthCheckResponse::SERVING);
  }
  watch->Finish();
  CHECK(d.Cli({"status"}).exit_code == 3);  // and now it is gone
}

TEST_CASE(
    "a full disk: writes are refused with the reason (exit 1), health is NOT_SERVING, and both "
    "come back by themselves once space is freed",
    "[plugin]") {
  DaemonFixture d;
  // The state dir is a 4 MiB tmpfs in the daemon's own mount namespace.
  d.SetLauncher(
      {"/usr/bin/unshare", geteuid() == 0 ? "-m" : "-rm", "/bin/sh", "-c",
       "mkdir -p \"$0\" && mount -t tmpfs -o size=4m tmpfs \"$0\" && exec \"$@\"", d.state_dir()},
      {});
  d.Start();
  REQUIRE(Check(d, "conclave.v1.Conclave").second == HealthCheckResponse::SERVING);
  // Fill it from outside, through the daemon's view of the file system, leaving 64 KiB.
  std::string inside = "/proc/" + std::to_string(d.pid()) + "/root" + d.state_dir();
  struct statvfs fs {};
  REQUIRE(statvfs(inside.c_str(), &fs) == 0);
  uint64_t avail = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  REQUIRE(avail > (256u << 10));
  {
    std::ofstream filler(inside + "/filler", std::ios::binary);
    filler << std::string(avail - (64u << 10), 'x');
  }
  // A 512 KiB message cannot be committed: refused, the reason printed, exit 1 (not 3).
  RunResult big = d.Cli(
      {"send", "--to", "coordinator", "--type", "status", "--subject", "big", "--body-file", "-"},
      std::string(512u << 10, 'b'));
  INFO(big.err << d.daemon_log());
  CHECK(big.exit_code == 1);
  CHECK(big.err.find("resource exhausted: store: the disk is full") != std::string::npos);
  CHECK(Check(d, "conclave.v1.Conclave").second == HealthCheckResponse::NOT_SERVING);
  CHECK(Check(d, "").second == HealthCheckResponse::NOT_SERVING);
  RunResult small =
      d.Cli({"--json", "send", "--to", "coordinator", "--type", "status", "--subject", "small"});
  CHECK(small.exit_code == 1);
  CHECK(small.err.find("writes are refused until space is freed") != std::string::npos);
  CHECK(json::parse(small.out)["error"]["unreachable"] == false);
  // Nothing refused was stored.
  RunResult none = d.Cli({"--json", "check", "--terminal", "coordinator", "--peek"});
  INFO(none.out << none.err);
  CHECK(none.out.find("\"small\"") == std::string::npos);

  // Free the space: health turns SERVING by itself (the daemon probes), and writes land.
  auto stub = grpc::health::v1::Health::NewStub(Channel(d));
  grpc::ClientContext ctx;
  Deadline(&ctx, 60s);
  HealthCheckRequest req;
  req.set_service("conclave.v1.Conclave");
  auto watch = stub->Watch(&ctx, req);
  HealthCheckResponse resp;
  REQUIRE(watch->Read(&resp));
  CHECK(resp.status() == HealthCheckResponse::NOT_SERVING);
  REQUIRE(std::filesystem::remove(inside + "/filler"));
  REQUIRE(watch->Read(&resp));
  CHECK(resp.status() == HealthCheckResponse::SERVING);
  ctx.TryCancel();
  RunResult after =
      d.Cli({"send", "--to", "coordinator", "--type", "status", "--subject", "after"});
  CHECK(after.exit_code == 0);
  RunResult got = d.Cli({"--json", "check", "--terminal", "coordinator"});
  CHECK(got.out.find("\"after\"") != std::string::npos);
}

TEST_CASE("terminal read --follow streams the transcript live and ends with the dispatch",
          "[plugin]") {
  DaemonFixture d;
  std::ifstream shell(std::string(CONCLAVE_SOURCE_DIR) + "/profiles/shell.json");
  d.WriteProfile("shell", json::parse(shell));
  d.Start();
  d.Cli({"terminal", "create", "--profile", "shell", "--handle", "sh1", "--cwd", d.dir()});
  // The worker prints tick-1, then blocks on a FIFO that the test opens only after it saw
  // tick-1 on the follower's stdout: the line can only have arrived while the worker ran.
  std::string fifo = d.dir() + "/go.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  std::string task =
      Id(d.CliJson({"task", "create", "--brief", "-", "--role", "stage"},
                   "echo tick-1\nread -r go < " + fifo + "\necho \"tick-2 $go\"\n")["task"]["id"]);
  std::string dispatch = Id(d.CliJson({"dispatch", "--task", task, "--to", "sh1"})["id"]);
  StreamingChild follow({CONCLAVE_BIN, "--socket", d.socket(), "terminal", "read", "sh1",
                         "--dispatch", dispatch, "--follow"},
                        d.dir() + "/follow.err");
  bool live = follow.ReadUntil([](const std::string& l) { return l == "tick-1"; }, 30s);
  {
    int fd = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);  // unblocks the worker either way
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, "go\n", 3) == 3);
    close(fd);
  }
  REQUIRE(live);
  CHECK(follow.Finish(30s) == 0);  // the stream ended by itself with the dispatch
  CHECK(follow.lines().back() == "tick-2 go");
  // What streamed is what is stored.
  RunResult all = d.Cli({"terminal", "read", "sh1", "--dispatch", dispatch});
  CHECK(all.out == "tick-1\ntick-2 go\n");
}

TEST_CASE("FollowTranscript of a queued dispatch ends when it is cancelled without running",
          "[plugin]") {
  DaemonFixture d;
  d.WriteProfile("fake", d.FakeProfile("fake", "fakefam"));
  d.Start();
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "w1", "--cwd", d.dir()});
  std::string busy =
      Id(d.CliJson({"task", "create", "--brief", "-"}, "FAKE: hang\n")["task"]["id"]);
  d.CliJson({"dispatch", "--task", busy, "--to", "w1"});
  std::string queued =
      Id(d.CliJson({"task", "create", "--brief", "-"}, "FAKE: print x\n")["task"]["id"]);
  json q = d.CliJson({"dispatch", "--task", queued, "--to", "w1"});
  REQUIRE(q["state"] == "queued");
  std::string before = d.CliJson({"status"})["counts"]["watchers"].get<std::string>();

  auto stub = conclave::v1::Conclave::NewStub(Channel(d));
  grpc::ClientContext ctx;
  Deadline(&ctx, 60s);
  conclave::v1::FollowTranscriptRequest req;
  req.set_dispatch_id(std::stoll(Id(q["id"])));
  auto stream = stub->FollowTranscript(&ctx, req);
  // The follower watches the queued dispatch's task (one more bus watcher).
  REQUIRE(WaitFor(
      [&] { return d.CliJson({"status"})["counts"]["watchers"].get<std::string>() != before; },
      10s));
  d.CliJson({"task", "cancel", queued});
  std::vector<conclave::v1::TranscriptChunk> chunks;
  conclave::v1::TranscriptChunk c;
  auto done = std::async(std::launch::async, [&] {
    while (stream->Read(&c)) chunks.push_back(c);
    return stream->Finish();
  });
  bool ended = done.wait_for(20s) == std::future_status::ready;
  if (!ended) ctx.TryCancel();  // so the reader returns and the test can fail cleanly
  grpc::Status end = done.get();
  REQUIRE(ended);
  CHECK(end.ok());
  REQUIRE(chunks.size() == 1);
  CHECK(chunks[0].eof());
  CHECK(chunks[0].data().empty());
  d.CliJson({"task", "cancel", busy});
}
