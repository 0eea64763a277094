// ThreadName: names the daemon's threads as `top -H`, `ps -L` and /proc/PID/task/*/comm show
// them, so each can be told apart there and its CPU read (the bench splits a dispatch's CPU by
// these names). Linux keeps the first 15 characters.
// Thread-safety: NameThisThread names the calling thread, NameThread a thread just started (by
// whoever holds it, so the name is there before anything can look); NamePoolThreads must not be
// called from one of the pool's own threads.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <thread>

namespace conclave {

void NameThisThread(const char* name);
void NameThread(std::thread& thread, const char* name);

// Names each of the pool's threads, `threads` of them, which must be its whole size: one task per
// thread, each held until all of them have started, so no thread takes two. Called before
// anything else is posted to the pool; returns once they have all started (microseconds).
// `also`, when given, runs on each of them too (before the name).
void NamePoolThreads(boost::asio::thread_pool& pool, int threads, const char* name,
                     void (*also)() = nullptr);

}  // namespace conclave
