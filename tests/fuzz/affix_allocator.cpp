// AffixAllocator<Region, std::uint64_t, std::uint32_t>: a prefix and a suffix around every block. The prefix and
// suffix of every live block are written and checked too, so a block that overlaps another's affixes is caught.
#include <alloy/affix_allocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/region.hpp>

#include "fuzz_driver.hpp"

ALLOY_FUZZ(in) {
  alloy::AffixAllocator<alloy::Region<alloy::Mallocator>, std::uint64_t, std::uint32_t> a(
      alloy::Region<alloy::Mallocator>(16 * (in.u8() % 257)));
  alloy::fuzz::Config c;
  c.arena = 4096;
  c.deallocate_may_refuse = true;  // the region takes back its last block only
  c.padding_stays = true;
  alloy::fuzz::run(a, c, in);
}
