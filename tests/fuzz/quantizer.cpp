// Quantizer<BitmappedBlock, RoundUpToMultipleOf<96>>: requests rounded up to 96 bytes (not a power of two), the
// rest of the rounded block used by expand and reallocate in place. The invariants, owns, empty.
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/quantizer.hpp>

#include "fuzz_driver.hpp"

ALLOY_FUZZ(in) {
  using Parent = alloy::BitmappedBlock<32, 16, alloy::Mallocator>;
  alloy::Quantizer<Parent, alloy::RoundUpToMultipleOf<96>> a(Parent(32 * (in.u8() % 257)));
  alloy::fuzz::Config c;
  c.arena = 4096;
  c.granule = 96;
  alloy::fuzz::run(a, c, in);
}
