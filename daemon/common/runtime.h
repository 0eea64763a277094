// Runtime: process-wide settings of the libraries under the daemon, applied once at start
// before any thread exists (conclaved's main, and the bench's ping server, so both sides of
// a benchmark ratio run the same way).
// Debian builds abseil without NDEBUG, so every absl::Mutex that gRPC locks — several per RPC,
// on the loop and on gRPC's threads — also runs abseil's debug-only deadlock detection: a
// lookup in a global lock-order graph under one process-wide spin lock, and a graph node
// removed whenever a mutex is destroyed. It is a debugging aid (off by default in release
// builds of abseil); ProductionRuntime() turns it off.
//
// Background threads run SCHED_BATCH. The loop hands every reply to gRPC, which wakes one of its
// threads for it; as SCHED_OTHER that thread took the loop's core at once (on 2 cores, gRPC's own
// threads were half of what preempted the loop) and the loop finished its turn later. A SCHED_BATCH
// thread is not preempted for and does not preempt on wake-up: it runs on an idle core, or when the
// thread running sleeps or uses up its slice. It keeps its fair share of CPU. The threads started
// before the loop runs (gRPC's, the helpers') stay SCHED_BATCH; the loop, which polls the API's
// completion queue (api/queue_loop), its watcher, the queue's own thread where it has one
// (api/async_calls) and the launcher's spawning thread (exec/launcher) run SCHED_OTHER, and so do
// the threads gRPC starts later from them (its executor's, on demand). The queue thread, when
// there was only that, read every request: as SCHED_BATCH it could not take a core from a
// worker (nice 10, SCHED_OTHER) when both cores were busy, so a call waited for the worker's slice
// to end before it was read. It is woken by each reply's completion too, and may take the loop's
// core then; measured, the load section's wake and GetStatus p99 fell ~20% and the idle rows moved
// within their noise (README, Performance). A child spawned from a batch thread is put back to
// SCHED_OTHER (SpawnChild), so workers and commands are scheduled as any other process, only
// child_nice nicer than the daemon (exec::SetChildNice). A daemon started under another policy
// (systemd's CPUSchedulingPolicy=) is left exactly as it is.
#pragma once

namespace conclave {

void ProductionRuntime();

// Puts the calling thread in SCHED_BATCH, so the threads it starts from now on (gRPC's, the
// helper pool, the checkpointer, the log writer) inherit it. Does nothing unless the thread
// runs SCHED_OTHER.
void BeginBackgroundThreads();
// Puts the calling thread (the loop, its watcher, the API's queue thread, the launcher's) back
// to SCHED_OTHER after BeginBackgroundThreads().
void EndBackgroundThreads();
// True when the calling thread runs SCHED_BATCH because of BeginBackgroundThreads(): what it
// spawns is to be put back to SCHED_OTHER.
bool InBackgroundThread();

}  // namespace conclave
