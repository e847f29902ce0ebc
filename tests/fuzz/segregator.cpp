// Segregator<64, BitmappedBlock, threshold<1024>, Region, Mallocator>: three parts by size. The invariants.
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/region.hpp>
#include <alloy/segregator.hpp>

#include "fuzz_driver.hpp"

ALLOY_FUZZ(in) {
  using Small = alloy::BitmappedBlock<64, 16, alloy::Mallocator>;
  using Medium = alloy::Region<alloy::Mallocator>;
  alloy::Segregator<64, Small, alloy::threshold<1024>, Medium, alloy::Mallocator> a(
      Small(4096), alloy::Segregator<1024, Medium, alloy::Mallocator>(Medium(8192), {}));
  alloy::fuzz::Config c;
  c.arena = 1024;
  c.granule = 64;
  c.deallocate_may_refuse = true;  // the region takes back its last block only
  c.padding_stays = true;
  alloy::fuzz::run(a, c, in);
}
