#include "store/sqlite_memory.h"

#include <sqlite3.h>

#include <atomic>
#include <cstdlib>

namespace conclave::store {
namespace {

std::atomic<int64_t> g_bytes{0};
std::atomic<bool> g_installed{false};

// Each block starts with its size (8 bytes, which keeps the rest 8-byte aligned), as SQLite's
// own allocator does.
int64_t* Head(void* p) { return static_cast<int64_t*>(p) - 1; }

void* Malloc(int n) {
  auto* h = static_cast<int64_t*>(std::malloc(static_cast<size_t>(n) + sizeof(int64_t)));
  if (!h) return nullptr;
  *h = n;
  g_bytes.fetch_add(n, std::memory_order_relaxed);
  return h + 1;
}

void Free(void* p) {
  if (!p) return;
  g_bytes.fetch_sub(*Head(p), std::memory_order_relaxed);
  std::free(Head(p));
}

void* Realloc(void* p, int n) {
  const int64_t before = *Head(p);
  auto* h = static_cast<int64_t*>(std::realloc(Head(p), static_cast<size_t>(n) + sizeof(int64_t)));
  if (!h) return nullptr;
  *h = n;
  g_bytes.fetch_add(n - before, std::memory_order_relaxed);
  return h + 1;
}

int Size(void* p) { return p ? static_cast<int>(*Head(p)) : 0; }
int Roundup(int n) { return (n + 7) & ~7; }
int Init(void*) { return SQLITE_OK; }
void Shutdown(void*) {}

}  // namespace

void InstallSqliteAllocator() {
  static const bool installed = [] {
    static const sqlite3_mem_methods kMethods = {Malloc, Free,  Realloc,  Size,
                                                 Roundup, Init, Shutdown, nullptr};
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &kMethods) != SQLITE_OK) return false;
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
  }();
  g_installed.store(installed, std::memory_order_relaxed);
}

bool SqliteAllocatorInstalled() { return g_installed.load(std::memory_order_relaxed); }

std::string SqliteLibrary() {
#ifdef CONCLAVE_BUNDLED_SQLITE
  return std::string(sqlite3_libversion()) + " (bundled)";
#else
  return std::string(sqlite3_libversion()) + " (system)";
#endif
}

int64_t SqliteMemoryUsed() {
  if (!g_installed.load(std::memory_order_relaxed)) return sqlite3_memory_used();
  return g_bytes.load(std::memory_order_relaxed);
}

}  // namespace conclave::store
