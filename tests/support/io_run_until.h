// RunUntil: runs an io_context's handlers until done() holds. False after a minute: a bound
// against a hang, not a wait (a passing test is done long before).
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>

inline bool RunUntil(boost::asio::io_context& io, const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.run_one_for(std::chrono::seconds(1));
  }
  return done();
}
