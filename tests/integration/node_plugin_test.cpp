// Integration: the reference Node plugin (examples/node-plugin, @grpc/grpc-js and
// @grpc/proto-loader from the npm registry) against a real daemon, loading the proto that
// `cmake --install` put under share/conclave/proto. Hidden from the default run: ctest runs it
// as its own test, which reports SKIPPED (exit 77) when npm cannot reach its registry.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "daemon_fixture.h"
#include "streaming_child.h"

using conclave::testing::DaemonFixture;
using conclave::testing::RunProgram;
using conclave::testing::RunResult;
using conclave::testing::StreamingChild;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

// NODE_PATH of the plugin's dependencies, installed once into a cache; exits 77 when npm is
// unreachable (ctest: SKIP_RETURN_CODE).
std::string NodeModulesOrSkip() {
  std::string cache;
  if (const char* c = std::getenv("CONCLAVE_NODE_CACHE"); c && *c) {
    cache = c;
  } else {
    const char* home = std::getenv("HOME");
    cache = std::string(home ? home : "/tmp") + "/.cache/conclave-node-plugin";
  }
  std::string src = CONCLAVE_SOURCE_DIR;
  RunResult deps = RunProgram({"/bin/bash", src + "/tests/integration/install-node-plugin-deps.sh",
                               src + "/examples/node-plugin/package.json", cache});
  if (deps.exit_code == 77) {
    std::cerr << deps.err << "node plugin test SKIPPED\n";
    std::exit(77);
  }
  INFO(deps.err);
  REQUIRE(deps.exit_code == 0);
  std::string dir = deps.out;
  while (!dir.empty() && (dir.back() == '\n' || dir.back() == ' ')) dir.pop_back();
  return dir;
}

size_t IndexOf(const std::vector<std::string>& lines, const std::string& needle) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(needle) != std::string::npos) return i;
  }
  return lines.size();
}

}  // namespace

TEST_CASE("the Node example plugin prints a live transcript of a dispatch", "[.][node-plugin]") {
  std::string node_modules = NodeModulesOrSkip();
  DaemonFixture d;
  // The proto as installed: cmake --install of the "api" component into a scratch prefix.
  std::string prefix = d.dir() + "/prefix";
  RunResult inst = RunProgram({CMAKE_COMMAND_BIN, "--install", CONCLAVE_BINARY_DIR, "--component",
                               "api", "--prefix", prefix});
  INFO(inst.out << inst.err);
  REQUIRE(inst.exit_code == 0);
  std::string proto_dir = prefix + "/share/conclave/proto";
  REQUIRE(std::filesystem::exists(proto_dir + "/conclave/v1/conclave.proto"));

  std::ifstream shell(std::string(CONCLAVE_SOURCE_DIR) + "/profiles/shell.json");
  d.WriteProfile("shell", json::parse(shell));
  d.Start();
  std::string fifo = d.dir() + "/go.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  std::string brief =
      d.WriteFile("brief.sh", "echo tick-1\nread -r go < " + fifo + "\necho \"tick-2 $go\"\n");
  std::string plugin = std::string(CONCLAVE_SOURCE_DIR) + "/examples/node-plugin/plugin.js";
  std::vector<std::string> env = {"NODE_PATH=" + node_modules};

  StreamingChild demo(
      {"/usr/bin/env", "node", plugin, "demo", "--socket", d.socket(), "--proto-dir", proto_dir,
       "--terminal", "plugin-sh", "--profile", "shell", "--brief-file", brief},
      d.dir() + "/plugin.err", env);
  // tick-1 reaches the plugin while the worker is blocked on the FIFO: a live transcript.
  bool live = demo.ReadUntil([](const std::string& l) { return l == "tick-1"; }, 90s);
  {
    int fd = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, "go\n", 3) == 3);
    close(fd);
  }
  INFO("plugin stderr: " << demo.err());
  REQUIRE(live);
  CHECK(demo.Finish(60s) == 0);
  const auto& lines = demo.lines();
  size_t status = IndexOf(lines, "plugin: conclaved ");
  size_t dispatched = IndexOf(lines, "plugin: dispatch ");
  size_t tick1 = IndexOf(lines, "tick-1");
  size_t tick2 = IndexOf(lines, "tick-2 go");
  size_t ended = IndexOf(lines, "plugin: transcript of dispatch");
  size_t done = IndexOf(lines, "plugin: worker_done #");
  CHECK(status < dispatched);
  CHECK(dispatched < tick1);
  CHECK(tick1 < tick2);
  CHECK(tick2 < ended);
  REQUIRE(done < lines.size());
  CHECK(ended < done);
  CHECK(lines[done].find("succeeded") != std::string::npos);

  // The standard health service, from Node, with Debian's copy of health.proto.
  if (std::filesystem::exists("/usr/share/grpc-proto/grpc/health/v1/health.proto")) {
    RunResult health =
        RunProgram({"/usr/bin/env", "node", plugin, "health", "--socket", d.socket()}, "", env);
    INFO(health.err);
    CHECK(health.exit_code == 0);
    CHECK(health.out.find("health (overall): SERVING") != std::string::npos);
    CHECK(health.out.find("health conclave.v1.Conclave: SERVING") != std::string::npos);
  }
}
