// ThreadName: names the daemon's threads as `top -H`, `ps -L` and /proc/PID/task/*/comm show
// them, so each can be told apart there and its CPU read (the bench splits a dispatch's CPU by
// these names). Linux keeps the first 15 characters.
// Thread-safety: NameThisThread names the calling thread; NamePoolThreads may be called from
// any thread, once, before anything else is posted to the pool.
#pragma once

#include <boost/asio/thread_pool.hpp>

namespace conclave {

void NameThisThread(const char* name);

// Names each of the `threads` threads of `pool` (its whole size): one task per thread, each held
// until all of them have started, so no thread takes two. Returns once they have (microseconds;
// it gives up after 10 s, when a thread cannot start).
void NamePoolThreads(boost::asio::thread_pool& pool, int threads, const char* name);

}  // namespace conclave
