// SQLite's heap without its global memory-statistics mutex. Debian's libsqlite3 takes a mutex
// and updates its statistics on every malloc and free (thousands per dispatch: it is built
// without lookaside, so every value a statement copies is a malloc); the bundled SQLite has
// them off by default (cmake/BundledSqlite.cmake). This allocator counts the bytes with one
// relaxed atomic instead, so what SQLite holds is still known with either.
#pragma once

#include <cstdint>
#include <string>

namespace conclave::store {

// Installs the allocator; must run before SQLite initializes (the first Database does it).
// Harmless when SQLite is already initialized: SQLite then keeps its own allocator.
void InstallSqliteAllocator();

// True once the allocator is SQLite's (false when something initialized SQLite first).
bool SqliteAllocatorInstalled();

// The SQLite linked: its version, then "(bundled)" or "(system)", e.g. "3.53.2 (bundled)".
std::string SqliteLibrary();

// Bytes SQLite holds on the heap (page caches, statements, journals), as it asked for them
// (sqlite3_memory_used() without this allocator rounds each block up to 8 bytes).
int64_t SqliteMemoryUsed();

}  // namespace conclave::store
