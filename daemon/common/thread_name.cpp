#include "common/thread_name.h"

#include <pthread.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

namespace conclave {
namespace {
// A misuse (more threads asked for than the pool has) stalls the caller this long, not forever.
constexpr auto kNamingWait = std::chrono::seconds(10);

// pthread_setname_np refuses a name longer than 15 characters instead of cutting it.
std::string Cut(const char* name) { return std::string(name).substr(0, 15); }
}  // namespace

void NameThisThread(const char* name) { pthread_setname_np(pthread_self(), Cut(name).c_str()); }

void NameThread(std::thread& thread, const char* name) {
  if (thread.joinable()) pthread_setname_np(thread.native_handle(), Cut(name).c_str());
}

void NamePoolThreads(boost::asio::thread_pool& pool, int threads, const char* name,
                     void (*also)()) {
  struct Started {
    std::mutex mu;
    std::condition_variable all;
    int left;
  };
  auto started = std::make_shared<Started>();
  started->left = threads;
  for (int i = 0; i < threads; ++i) {
    boost::asio::post(pool, [started, name = std::string(name), also] {
      if (also) also();
      NameThisThread(name.c_str());
      std::unique_lock lock(started->mu);
      if (--started->left == 0) started->all.notify_all();
      started->all.wait_for(lock, kNamingWait, [&] { return started->left == 0; });
    });
  }
  std::unique_lock lock(started->mu);
  started->all.wait_for(lock, kNamingWait, [&] { return started->left == 0; });
}

}  // namespace conclave
