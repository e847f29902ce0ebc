// Bucketizer<BitmappedBlock, 1, 512, 128>: four buckets; sizes outside [1, 512] fail. The invariants, owns, empty.
#include <alloy/bitmapped_block.hpp>
#include <alloy/bucketizer.hpp>
#include <alloy/mallocator.hpp>

#include "fuzz_driver.hpp"

ALLOY_FUZZ(in) {
  using Bucket = alloy::BitmappedBlock<64, 16, alloy::Mallocator>;
  alloy::Bucketizer<Bucket, 1, 512, 128> a([](std::size_t) { return Bucket(4096); });
  alloy::fuzz::Config c;
  c.arena = 512;
  c.granule = 64;
  alloy::fuzz::run(a, c, in);
}
