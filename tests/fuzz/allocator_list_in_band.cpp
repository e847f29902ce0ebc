// AllocatorList in-band (NullAllocator bookkeeping: its nodes live in the memory of the first allocator, D's
// layout) over BitmappedBlocks of 16 KiB; the invariants, owns and empty.
#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>

#include "fuzz_driver.hpp"

namespace {
struct Blocks {
  alloy::BitmappedBlock<64, 16, alloy::Mallocator> operator()(std::size_t n) const {
    return alloy::BitmappedBlock<64, 16, alloy::Mallocator>(n > 16384 ? n : 16384);
  }
};
}  // namespace

ALLOY_FUZZ(in) {
  alloy::AllocatorList<Blocks, alloy::NullAllocator> a;
  alloy::fuzz::Config c;
  c.arena = 16384;
  c.granule = 64;
  alloy::fuzz::run(a, c, in);
}
