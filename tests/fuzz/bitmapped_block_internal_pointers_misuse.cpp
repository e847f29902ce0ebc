// BitmappedBlockWithInternalPointers<64, 16, Mallocator> with ALLOY_ASSERT off, as in a release build, in lockstep
// with BitmapModel, plus misuse: a double free, a foreign block and a wrong size or interior pointer must be refused
// (false, nothing changed; docs/primitives.md).
#define ALLOY_ENABLE_ASSERTS 0
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
  c.refuses_double_free = c.refuses_foreign = c.refuses_wrong_size = true;
  alloy::fuzz::run(a, m, c, in);
}
