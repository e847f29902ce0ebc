// BitmappedBlock<choose_at_runtime, 16, Mallocator>: the block size (16 to 512, any multiple of 16, powers of two
// or not) and the arena come from the input; in lockstep with BitmapModel.
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>

#include "fuzz_driver.hpp"
#include "support/bitmapped_block_model.hpp"

ALLOY_FUZZ(in) {
  const std::size_t bs = 16 * (1 + in.u8() % 32);
  alloy::BitmappedBlock<alloy::choose_at_runtime, 16, alloy::Mallocator> a(bs * (in.u16() % 301), bs);
  alloy::test::BitmapModel m(a.payload(), bs, a.block_count(), 16, true);
  alloy::fuzz::Config c;
  c.arena = a.block_count() * bs;
  c.granule = bs;
  c.lo = a.payload();
  c.span = c.arena;
  alloy::fuzz::run(a, m, c, in);
}
