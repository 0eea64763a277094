#include "common/loop_kick.h"

#include <atomic>
#include <thread>

namespace conclave {
namespace {

// No lock on a kick: a helper preempted while holding one would hold up the watcher's kicks too.
// A kick counts itself in flight before it reads the kicker; SetLoopKick(io, nullptr) clears the
// kicker and then waits until no kick is in flight (both sequentially consistent, so a kick
// either sees nullptr or is waited for).
std::atomic<boost::asio::io_context*> g_io{nullptr};
std::atomic<LoopKicker*> g_kicker{nullptr};
std::atomic<int> g_in_flight{0};
std::atomic<std::thread::id> g_loop_thread{};

}  // namespace

void SetLoopKick(boost::asio::io_context& io, LoopKicker* kicker) {
  if (kicker) {
    g_loop_thread.store(std::this_thread::get_id());
    g_io.store(&io);
    g_kicker.store(kicker);
    return;
  }
  g_kicker.store(nullptr);
  while (g_in_flight.load() != 0) std::this_thread::yield();
  g_io.store(nullptr);
  g_loop_thread.store(std::thread::id());
}

void KickLoop(boost::asio::io_context& io) {
  if (g_kicker.load() == nullptr) return;
  if (std::this_thread::get_id() == g_loop_thread.load()) return;  // it is awake: it posted
  g_in_flight.fetch_add(1);
  LoopKicker* kicker = g_kicker.load();
  if (kicker && g_io.load() == &io) kicker->Kick();
  g_in_flight.fetch_sub(1);
}

}  // namespace conclave
