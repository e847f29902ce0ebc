// The memory-space rule (DESIGN.md §4) over a host parent: the summary index is written by the host, so device
// memory (NoAccessAllocator) as Bookkeeping must not compile. Found in review: it compiled and faulted at
// construction.
// expect: Bookkeeping .*must be a stateless, host-accessible allocator with deallocate \(Mallocator, the default\)
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>

int main() {
  alloy::BitmappedBlock<64, 16, alloy::Mallocator, alloy::Multiblock::yes, alloy::NoAccessAllocator> b(64 * 256);
  return b.allocate(64) ? 0 : 1;
}
