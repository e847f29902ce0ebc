// The memory-space rule (DESIGN.md §4): free_list threads its list through the free blocks, so over alloy::NoAccessAllocator (device memory) it must not compile, and the message names BitmappedBlock.
// expect: Parent must be host-accessible.*alloy::BitmappedBlock
#include <alloy/free_list.hpp>
#include <alloy/no_access_allocator.hpp>

using P = alloy::NoAccessAllocator;

int main() {
  alloy::FreeList<P, 64> a;
  return a.allocate(64) ? 0 : 1;
}
