// AllocatorList of regions, out-of-band (its nodes from Mallocator): regions of at least 1 KiB, made and destroyed
// as the requests come; the invariants, owns and empty.
#include <alloy/allocator_list.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/region.hpp>

#include "fuzz_driver.hpp"

namespace {
struct Regions {
  alloy::Region<alloy::Mallocator> operator()(std::size_t n) const {
    return alloy::Region<alloy::Mallocator>(n > 1024 ? n : 1024);
  }
};
}  // namespace

ALLOY_FUZZ(in) {
  alloy::AllocatorList<Regions> a;
  alloy::fuzz::Config c;
  c.arena = 1024;
  c.deallocate_may_refuse = true;  // a region takes back its last block only
  c.padding_stays = true;
  alloy::fuzz::run(a, c, in);
}
