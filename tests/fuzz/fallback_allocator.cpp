// FallbackAllocator<BitmappedBlock, Region>: what the first cannot serve goes to the second; owns, expand and
// deallocate route by owner. The invariants, owns and empty.
#include <alloy/bitmapped_block.hpp>
#include <alloy/fallback_allocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/region.hpp>

#include "fuzz_driver.hpp"

ALLOY_FUZZ(in) {
  alloy::FallbackAllocator<alloy::BitmappedBlock<64, 16, alloy::Mallocator>, alloy::Region<alloy::Mallocator>> a(
      alloy::BitmappedBlock<64, 16, alloy::Mallocator>(64 * (in.u8() % 129)),
      alloy::Region<alloy::Mallocator>(4096));
  alloy::fuzz::Config c;
  c.arena = 4096;
  c.granule = 64;
  c.deallocate_may_refuse = true;  // the region takes back its last block only
  c.padding_stays = true;
  alloy::fuzz::run(a, c, in);
}
