// Heap: which allocator serves this process's malloc and operator new.
// conclaved links mimalloc (CMake option CONCLAVE_MIMALLOC, on by default; configuring fails
// without libmimalloc-dev; sanitizer builds keep libc's malloc):
// glibc's malloc spent ~125 instructions on a typical allocation of the dispatch path — most
// of SQLite's are bigger than its per-thread cache takes — and the path makes ~1,600 of them
// per dispatch (SQLite in Debian is built without its lookaside, so every value a statement
// copies is a malloc). The library overrides malloc and new for the whole process when it
// is linked; HeapAllocator() checks that it really does, by asking whether a block malloc just
// returned lies in its heap, so a build whose link order let libc's malloc win says so.
#pragma once

#include <string>

namespace conclave {

// "mimalloc <version>" when malloc is served by mimalloc, "libc" otherwise (sanitizer builds,
// or built without it); "libc (mimalloc linked but not in use)" when the override failed.
std::string HeapAllocator();

}  // namespace conclave
