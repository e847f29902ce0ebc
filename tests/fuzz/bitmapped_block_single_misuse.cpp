// BitmappedBlock<64, 16, Mallocator, Multiblock::no> with ALLOY_ASSERT off, as in a release build, in lockstep with
// BitmapModel, plus misuse: a double free and a foreign block must be refused (false, nothing changed).
#define ALLOY_ENABLE_ASSERTS 0
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
  c.refuses_double_free = c.refuses_foreign = true;
  alloy::fuzz::run(a, m, c, in);
}
