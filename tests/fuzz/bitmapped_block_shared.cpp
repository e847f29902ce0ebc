// SharedBitmappedBlock<64, 16, Mallocator>, one thread: the invariants only (its single-block search starts at
// the thread's word, not at the lowest free block, so BitmapModel does not predict its addresses).
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>

#include "fuzz_driver.hpp"

ALLOY_FUZZ(in) {
  alloy::SharedBitmappedBlock<64, 16, alloy::Mallocator> a(64 * (in.u16() % 301));
  alloy::fuzz::Config c;
  c.arena = a.block_count() * 64;
  c.granule = 64;
  c.lo = a.payload();
  c.span = c.arena;
  alloy::fuzz::run(a, c, in);
}
