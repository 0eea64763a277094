#include "common/loop_kick.h"

#include <atomic>
#include <mutex>
#include <thread>

namespace conclave {
namespace {

std::mutex g_mu;
boost::asio::io_context* g_io = nullptr;  // under g_mu
LoopKicker* g_kicker = nullptr;           // under g_mu
// Read without the lock: a post from the loop's own thread, or with no kicker, takes none.
std::atomic<bool> g_installed{false};
std::atomic<std::thread::id> g_loop_thread{};

}  // namespace

void SetLoopKick(boost::asio::io_context& io, LoopKicker* kicker) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_io = kicker ? &io : nullptr;
  g_kicker = kicker;
  g_loop_thread.store(kicker ? std::this_thread::get_id() : std::thread::id());
  g_installed.store(kicker != nullptr);
}

void KickLoop(boost::asio::io_context& io) {
  if (!g_installed.load()) return;
  if (std::this_thread::get_id() == g_loop_thread.load()) return;  // it is awake: it posted
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_kicker && g_io == &io) g_kicker->Kick();
}

}  // namespace conclave
