// The memory-space rule (DESIGN.md §4): over device memory BitmappedBlock keeps its bitmap in host memory from its
// Bookkeeping allocator; device memory (NoAccessAllocator) as Bookkeeping would have the host write the bitmap into
// device memory, so it must not compile, and the message names the alternative.
// expect: keeps its bitmap in host memory from Bookkeeping.*host-accessible.*\(Mallocator\)
#include <alloy/bitmapped_block.hpp>
#include <alloy/no_access_allocator.hpp>

int main() {
  alloy::BitmappedBlock<256, 256, alloy::NoAccessAllocator, alloy::Multiblock::yes, alloy::NoAccessAllocator> b(
      1 << 20);
  return b.allocate(256) ? 0 : 1;
}
