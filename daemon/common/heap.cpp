#include "common/heap.h"

#include <cstdlib>

#ifdef CONCLAVE_MIMALLOC
#include <mimalloc.h>
#endif

namespace conclave {

namespace {

std::string Probe() {
#ifdef CONCLAVE_MIMALLOC
  void* probe = std::malloc(64);
  const bool in_heap = probe != nullptr && mi_is_in_heap_region(probe);
  std::free(probe);
  if (!in_heap) return "libc (mimalloc linked but not in use)";
  const int v = mi_version();  // e.g. 209 for 2.0.9
  return "mimalloc " + std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." +
         std::to_string(v % 10);
#else
  return "libc";
#endif
}

}  // namespace

std::string HeapAllocator() {
  static const std::string name = Probe();
  return name;
}

}  // namespace conclave
