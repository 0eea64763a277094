// Runtime: process-wide settings of the libraries under the daemon, applied once at start
// before any thread exists (conclaved's main, and the bench's ping server, so both sides of
// a benchmark ratio run the same way).
// Debian builds abseil without NDEBUG, so every absl::Mutex that gRPC locks — several per RPC,
// on the loop and on gRPC's threads — also runs abseil's debug-only deadlock detection: a
// lookup in a global lock-order graph under one process-wide spin lock, and a graph node
// removed whenever a mutex is destroyed. It is a debugging aid (off by default in release
// builds of abseil); ProductionRuntime() turns it off.
#pragma once

namespace conclave {

void ProductionRuntime();

}  // namespace conclave
