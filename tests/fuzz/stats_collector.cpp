// StatsCollector<BitmappedBlock, Options::all>: every counter on, over a block with every primitive. The
// invariants, owns and empty.
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/stats_collector.hpp>

#include "fuzz_driver.hpp"

ALLOY_FUZZ(in) {
  using Parent = alloy::BitmappedBlock<64, 16, alloy::Mallocator>;
  alloy::StatsCollector<Parent> a(Parent(64 * (in.u8() % 129)));
  alloy::fuzz::Config c;
  c.arena = 4096;
  c.granule = 64;
  alloy::fuzz::run(a, c, in);
}
