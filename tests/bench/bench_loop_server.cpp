// The bare loop server: the structure DESIGN.md prescribes for conclaved, with nothing else in
// it. gRPC's async API with one completion-queue thread (the same build and settings as the
// ping server, bench_ping_server.cpp) posts every call into one Boost.Asio io_context on the
// main thread, SCHED_OTHER like conclaved's loop, and each reply is finished from there. No
// store, no checks, no request parsed:
//   - `Wait` parks (it is answered by the next `Send`),
//   - `Send` answers every parked `Wait`, then itself, with an empty message,
//   - `GetStatus` answers a StatusReply whose counts["waiters"] is the number parked (what
//     the bench's wake client polls to know its Wait is parked),
//   - any other method answers an empty message.
// So a round trip through it is a ping plus the hop to the loop and the reply finished from
// the loop, and a wake through it is what a Send → Wait wake costs in that structure before
// the daemon stores or checks anything. `bench --serve-loop SOCKET` runs it in a child process;
// it ends on SIGTERM. `bench --serve-async-loop-health SOCKET` runs the same server with gRPC's
// default health service registered beside it (the `api` section).
#include <boost/asio/io_context.hpp>
#include <vector>

#include "bench_support.h"

namespace bench {
namespace {

bool EndsWith(const std::string& s, const char* tail) {
  std::string t(tail);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

}  // namespace

int ServeLoop(const std::string& socket, bool health) {
  boost::asio::io_context io;
  std::vector<BareCall*> parked;  // on the loop
  return ServeBareAsync(socket, "loop", health, &io, [&parked](BareCall* c) {
    const std::string& m = c->method();
    if (EndsWith(m, "/Wait")) {
      parked.push_back(c);
    } else if (EndsWith(m, "/Send")) {
      for (BareCall* w : parked) w->Reply();
      parked.clear();
      c->Reply();
    } else if (EndsWith(m, "/GetStatus")) {
      v1::StatusReply status;
      (*status.mutable_counts())["waiters"] = static_cast<int64_t>(parked.size());
      std::string bytes = status.SerializeAsString();
      grpc::Slice slice(bytes);
      c->Reply(grpc::ByteBuffer(&slice, 1));
    } else {
      c->Reply();
    }
  });
}

}  // namespace bench
