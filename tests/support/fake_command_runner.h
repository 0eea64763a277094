// FakeCommandRunner: scripted helper commands. Each call is recorded; the answer is the first
// rule whose argv prefix matches, else exit 127. Hold(arg) makes calls with that argument wait
// on their helper thread until Release(): a test can act while a helper command is "running".
#pragma once

#include <algorithm>
#include <condition_variable>
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
    std::unique_lock<std::mutex> lock(mu_);
    calls.push_back(argv);
    if (!hold_.empty() && std::find(argv.begin(), argv.end(), hold_) != argv.end()) {
      ++held_;
      released_.wait(lock, [&] { return hold_.empty(); });
      --held_;
    }
    for (const auto& [prefix, result] : rules) {
      if (Matches(prefix, argv)) return result;
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

  void Hold(std::string arg) {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = std::move(arg);
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      hold_.clear();
    }
    released_.notify_all();
  }
  int held() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_;
  }

  std::vector<std::pair<std::vector<std::string>, exec::CommandResult>> rules;
  std::vector<std::vector<std::string>> calls;

 private:
  static bool Matches(const std::vector<std::string>& prefix, const std::vector<std::string>& argv) {
    return !prefix.empty() && argv.size() >= prefix.size() &&
           std::equal(prefix.begin(), prefix.end(), argv.begin());
  }

  std::mutex mu_;
  std::condition_variable released_;
  std::string hold_;
  int held_ = 0;
};

}  // namespace conclave::testing
