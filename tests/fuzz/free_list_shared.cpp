// SharedFreeList<BitmappedBlock, 33, 64, 16>, one thread: at most about 16 nodes kept, the rest to the parent. The
// invariants, owns and empty.
#include <alloy/bitmapped_block.hpp>
#include <alloy/free_list.hpp>
#include <alloy/mallocator.hpp>

#include "fuzz_driver.hpp"

ALLOY_FUZZ(in) {
  using Parent = alloy::BitmappedBlock<64, 16, alloy::Mallocator>;
  alloy::SharedFreeList<Parent, 33, 64, 16> a(Parent(64 * (in.u8() % 129)));
  alloy::fuzz::Config c;
  c.arena = 4096;
  c.granule = 64;
  alloy::fuzz::run(a, c, in);
}
