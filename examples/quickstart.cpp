// The README's example: a block allocator over a bump region, both plain types, no virtual call.
#include <alloy/alloy.hpp>

#include <cstdio>

int main() {
  alloy::Mallocator heap;
  alloy::Block b = heap.allocate(100);
  if (!b) return 1;
  std::printf("quickstart: allocated %zu bytes at %p\n", b.size, b.ptr);
  return heap.deallocate(b) ? 0 : 1;
}
