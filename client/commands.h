// Registration of the CLI's subcommands. Each callback stores its exit code in *rc.
// Global flags (--json, --socket) live on the root app; subcommands fall through to it, so the
// flags work before or after the subcommand.
#pragma once

#include <CLI/CLI.hpp>

#include "rpc.h"

namespace conclave::client {

void AddMessagingCommands(CLI::App& app, Options& opts, int* rc);
void AddWaitCommands(CLI::App& app, Options& opts, int* rc);
void AddTerminalCommands(CLI::App& app, Options& opts, int* rc);
void AddTaskCommands(CLI::App& app, Options& opts, int* rc);
void AddReviewCommands(CLI::App& app, Options& opts, int* rc);
void AddFlowCommands(CLI::App& app, Options& opts, int* rc);

// Calls one unary RPC; on failure reports it and stores the exit code in *rc.
template <typename Req, typename Resp, typename Fn>
bool Call(Client& c, Fn fn, const Req& req, Resp* resp, int* rc, int64_t deadline_ms = 30000) {
  auto ctx = c.Context(deadline_ms);
  grpc::Status s = (c.stub().*fn)(ctx.get(), req, resp);
  if (!s.ok()) {
    *rc = c.Fail(s, ctx.get());
    return false;
  }
  return true;
}

// Prints one message in the human format (wait, watch, check, inbox).
void PrintMessage(const v1::Message& m);

// Reads a file, or stdin for "-". Returns false (and prints why) on failure.
bool ReadInput(const std::string& path, std::string* out);
// Splits "a,b,c" into parts (empty parts dropped).
std::vector<std::string> SplitList(const std::string& s);

}  // namespace conclave::client
