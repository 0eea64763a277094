// Registration of the CLI's subcommands. Each callback stores its exit code in *rc.
#pragma once

#include <CLI/CLI.hpp>

#include "rpc.h"

namespace conclave::client {

void AddMessagingCommands(CLI::App& app, Options& opts, int* rc);
void AddTaskCommands(CLI::App& app, Options& opts, int* rc);
void AddReviewCommands(CLI::App& app, Options& opts, int* rc);

// Reads a file, or stdin for "-". Returns false (and prints why) on failure.
bool ReadInput(const std::string& path, std::string* out);
// Splits "a,b,c" into parts (empty parts dropped).
std::vector<std::string> SplitList(const std::string& s);

}  // namespace conclave::client
