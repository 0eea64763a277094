// SQLite's heap without its global memory-statistics mutex. By default SQLite takes a mutex
// and updates its statistics on every malloc and free (thousands per dispatch: Debian builds
// it without lookaside, so every value a statement copies is a malloc). This allocator
// counts the bytes with one relaxed atomic instead, so what SQLite holds is still known.
#pragma once

#include <cstdint>

namespace conclave::store {

// Installs the allocator; must run before SQLite initializes (the first Database does it).
// Harmless when SQLite is already initialized: SQLite then keeps its own allocator.
void InstallSqliteAllocator();

// True once the allocator is SQLite's (false when something initialized SQLite first).
bool SqliteAllocatorInstalled();

// Bytes SQLite holds on the heap (page caches, statements, journals), as it asked for them
// (sqlite3_memory_used() without this allocator rounds each block up to 8 bytes).
int64_t SqliteMemoryUsed();

}  // namespace conclave::store
