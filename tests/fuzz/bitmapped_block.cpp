// BitmappedBlock<64, 16, Mallocator> (multiblock) in lockstep with BitmapModel; the arena's size comes from the
// input (0 to 700 blocks: less than a word, whole words, words and a part).
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>

#include "fuzz_driver.hpp"
#include "support/bitmapped_block_model.hpp"

ALLOY_FUZZ(in) {
  const std::size_t capacity = 64 * (in.u16() % 701);
  alloy::BitmappedBlock<64, 16, alloy::Mallocator> a(capacity);
  alloy::test::BitmapModel m(a.payload(), 64, a.block_count(), 16, true);
  alloy::fuzz::Config c;
  c.arena = a.block_count() * 64;
  c.granule = 64;
  c.lo = a.payload();
  c.span = c.arena;
  alloy::fuzz::run(a, m, c, in);
}
