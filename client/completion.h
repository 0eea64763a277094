// Shell completion scripts generated from the CLI11 command tree, so they always match the
// commands and flags the binary really has: `conclave completion bash|zsh|fish`.
// Options whose type_name is FILE or PATH complete file names, DIR directories; other options
// that take a value complete nothing; global flags (--json, --socket) are offered everywhere
// because subcommands fall through to the root.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace conclave::client {

// The script for shell ("bash", "zsh" or "fish"); "" for another shell.
std::string CompletionScript(const CLI::App& root, const std::string& shell);

// Registers `completion SHELL` on app; *rc is set to 2 for an unknown shell.
void AddCompletionCommand(CLI::App& app, int* rc);

// Registers the hidden `man-commands`: conclave(1)'s COMMANDS section (help2man include
// format) with every command and all its options (client/man_commands.cpp).
void AddManCommandsCommand(CLI::App& app);

}  // namespace conclave::client
