// FakeCommandRunner: scripted helper commands. Each call is recorded; the answer is the first
// rule whose argv prefix matches, else exit 127.
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "exec/command_runner.h"

namespace conclave::testing {

class FakeCommandRunner final : public exec::CommandRunner {
 public:
  exec::CommandResult Run(const std::vector<std::string>& argv, const std::string& cwd,
                          int timeout_ms) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls.push_back(argv);
    for (const auto& [prefix, result] : rules) {
      if (argv.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), argv.begin())) {
        return result;
      }
    }
    exec::CommandResult r;
    r.exit_code = 127;
    return r;
  }
  void When(std::vector<std::string> prefix, int exit_code, std::string out = "") {
    exec::CommandResult r;
    r.exit_code = exit_code;
    r.out = std::move(out);
    rules.emplace_back(std::move(prefix), r);
  }

  std::vector<std::pair<std::vector<std::string>, exec::CommandResult>> rules;
  std::vector<std::vector<std::string>> calls;

 private:
  std::mutex mu_;
};

}  // namespace conclave::testing
