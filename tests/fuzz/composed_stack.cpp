// A three-layer stack: StatsCollector over a Segregator whose small side is a FreeList over a BitmappedBlock and
// whose large side is a FallbackAllocator of a BitmappedBlock and Mallocator. The invariants, owns and empty.
#include <alloy/bitmapped_block.hpp>
#include <alloy/fallback_allocator.hpp>
#include <alloy/free_list.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/segregator.hpp>
#include <alloy/stats_collector.hpp>

#include "fuzz_driver.hpp"

namespace {
using Small = alloy::FreeList<alloy::BitmappedBlock<128, 16, alloy::Mallocator>, 65, 128>;
using Large = alloy::FallbackAllocator<alloy::BitmappedBlock<512, 16, alloy::Mallocator>, alloy::Mallocator>;
using Stack = alloy::StatsCollector<alloy::Segregator<128, Small, Large>>;
}  // namespace

ALLOY_FUZZ(in) {
  Stack a(alloy::Segregator<128, Small, Large>(Small(alloy::BitmappedBlock<128, 16, alloy::Mallocator>(16384)),
                                               Large(alloy::BitmappedBlock<512, 16, alloy::Mallocator>(8192), {})));
  alloy::fuzz::Config c;
  c.arena = 8192;
  c.granule = 128;
  alloy::fuzz::run(a, c, in);
}
