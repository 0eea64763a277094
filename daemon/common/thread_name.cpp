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
// Only a pool whose threads cannot start waits this long; the names are cosmetic.
constexpr auto kNamingWait = std::chrono::seconds(10);
}  // namespace

void NameThisThread(const char* name) {
  // pthread_setname_np refuses a name longer than 15 characters instead of cutting it.
  pthread_setname_np(pthread_self(), std::string(name).substr(0, 15).c_str());
}

void NamePoolThreads(boost::asio::thread_pool& pool, int threads, const char* name) {
  struct Started {
    std::mutex mu;
    std::condition_variable all;
    int left;
  };
  auto started = std::make_shared<Started>();
  started->left = threads;
  for (int i = 0; i < threads; ++i) {
    boost::asio::post(pool, [started, name] {
      NameThisThread(name);
      std::unique_lock lock(started->mu);
      if (--started->left == 0) started->all.notify_all();
      started->all.wait_for(lock, kNamingWait, [&] { return started->left == 0; });
    });
  }
  std::unique_lock lock(started->mu);
  started->all.wait_for(lock, kNamingWait, [&] { return started->left == 0; });
}

}  // namespace conclave
