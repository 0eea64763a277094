// RecentCallers: how many distinct connections the last kSpan requests came from.
//
// The loop's poll (api/queue_loop.h) pays for a client that waits for each reply before its
// next request: the loop would otherwise sleep through the client's side of every round trip.
// With many clients calling at once the loop's idle spells are the gaps between them, which the
// poll also catches, but on the CPU the clients need: at 16 clients sending, a poll of 100 µs
// took the daemon's CPU per Send from 1.77-1.98× to 2.02-2.18× a bare ping server's
// (README, Performance). So the loop polls only while few connections call it.
// Thread-safety: none (the queue's polling thread).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace conclave {

class RecentCallers {
 public:
  static constexpr int kSpan = 16;
  // A request came from this connection (gRPC's peer string: "fd:N" for conclaved's own
  // unix-socket connections).
  void Heard(std::string_view peer);
  // Distinct connections among the last kSpan requests (all of them before kSpan came).
  int Distinct() const;

 private:
  std::array<uint64_t, kSpan> ring_{};
  int next_ = 0, filled_ = 0;
};

}  // namespace conclave
