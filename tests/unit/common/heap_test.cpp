// The heap probe: names mimalloc only when malloc really returns its blocks.
#include "common/heap.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>

#ifdef CONCLAVE_MIMALLOC
#include <mimalloc.h>
#endif

TEST_CASE("the process heap is the one the build links, checked by where malloc's blocks live") {
  const std::string heap = conclave::HeapAllocator();
  INFO("heap: " << heap);
#ifdef CONCLAVE_MIMALLOC
  CHECK(heap.rfind("mimalloc 2.", 0) == 0);
  // The probe tells the two heaps apart: a block of new (through libstdc++'s operator new,
  // which calls malloc) is mimalloc's; memory it never handed out is not.
  auto block = std::make_unique<char[]>(4096);
  CHECK(mi_is_in_heap_region(block.get()));
  static char not_heap[64];
  CHECK_FALSE(mi_is_in_heap_region(not_heap));
#else
  CHECK(heap == "libc");
#endif
}
