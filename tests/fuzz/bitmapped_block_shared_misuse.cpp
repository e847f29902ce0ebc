// SharedBitmappedBlock<64, 16, Mallocator>, one thread, with ALLOY_ASSERT off, as in a release build: the
// invariants, plus misuse: a double free and a foreign block must be refused (false, nothing changed).
#define ALLOY_ENABLE_ASSERTS 0
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
  c.refuses_double_free = c.refuses_foreign = true;
  alloy::fuzz::run(a, c, in);
}
