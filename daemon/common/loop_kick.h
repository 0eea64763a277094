// LoopKick: wakes the loop from another thread while it waits in gRPC's completion queue rather
// than in Asio's reactor (api/queue_loop.h). Asio wakes its reactor for a post only when a
// thread blocks in it; the loop that polls the queue never does, so a handler posted from
// another thread (a helper's git result, a worker's exit from the launcher, a log write done)
// would wait for whatever woke the loop next. PostToLoop posts, then kicks.
// Thread-safety: every function may be called from any thread, and none takes a lock.
// SetLoopKick(io, nullptr) returns once no kick runs, so the kicker may then go away.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <utility>

namespace conclave {

class LoopKicker {
 public:
  virtual ~LoopKicker() = default;
  // Wakes the loop (from any thread, at any rate; wakes may be merged).
  virtual void Kick() = 0;
};

// Installs the kicker of io's loop, which runs on the calling thread; nullptr removes it.
void SetLoopKick(boost::asio::io_context& io, LoopKicker* kicker);

// Off the loop's thread, while io's loop polls gRPC's queue (a kicker is installed): wakes it
// (at most one wake outstanding). Otherwise nothing.
void KickLoop(boost::asio::io_context& io);

// boost::asio::post, for a handler posted to the loop from another thread.
template <class F>
void PostToLoop(boost::asio::io_context& io, F&& f) {
  boost::asio::post(io, std::forward<F>(f));
  KickLoop(io);
}

}  // namespace conclave
