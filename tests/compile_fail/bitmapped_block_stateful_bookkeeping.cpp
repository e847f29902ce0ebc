// Over host memory a multiblock BitmappedBlock takes its summary index from Bookkeeping{} (a temporary) and gives it
// back to another; a stateful Bookkeeping (here an in-situ region, whose memory dies with the temporary) must not
// compile, and the message names the alternative. Found in review: it compiled and wrote into a dead stack object.
// expect: Bookkeeping .*must be a stateless, host-accessible allocator with deallocate \(Mallocator, the default\)
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/region.hpp>

int main() {
  alloy::BitmappedBlock<64, 16, alloy::Mallocator, alloy::Multiblock::yes, alloy::InSituRegion<4096>> b(64 * 256);
  return b.allocate(64) ? 0 : 1;
}
