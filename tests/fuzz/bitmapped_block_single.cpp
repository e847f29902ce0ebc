// BitmappedBlock<64, 16, Mallocator, Multiblock::no> in lockstep with BitmapModel (single-block requests only).
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>

#include "fuzz_driver.hpp"
#include "support/bitmapped_block_model.hpp"

ALLOY_FUZZ(in) {
  alloy::BitmappedBlock<64, 16, alloy::Mallocator, alloy::Multiblock::no> a(64 * (in.u16() % 301));
  alloy::test::BitmapModel m(a.payload(), 64, a.block_count(), 16, false);
  alloy::fuzz::Config c;
  c.arena = a.block_count() * 64;
  c.granule = 64;
  c.lo = a.payload();
  c.span = c.arena;
  alloy::fuzz::run(a, m, c, in);
}
