// BitmappedBlockWithInternalPointers<64, 16, Mallocator> in lockstep with BitmapModel (which keeps the live
// allocations and answers resolve_internal_pointer).
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>

#include "fuzz_driver.hpp"
#include "support/bitmapped_block_model.hpp"

ALLOY_FUZZ(in) {
  alloy::BitmappedBlockWithInternalPointers<64, 16, alloy::Mallocator> a(64 * (in.u16() % 301));
  alloy::test::BitmapModel m(a.payload(), 64, a.block_count(), 16, true, true);
  alloy::fuzz::Config c;
  c.arena = a.block_count() * 64;
  c.granule = 64;
  c.lo = a.payload();
  c.span = c.arena;
  alloy::fuzz::run(a, m, c, in);
}
