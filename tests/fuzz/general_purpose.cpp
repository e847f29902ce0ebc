// examples/general_purpose.hpp's GeneralPurpose over 4 KiB regions (the smallest it takes, so that regions retire and
// spares are carved often): allocate, aligned_allocate, expand, reallocate and deallocate with the driver's
// invariants (sizes, alignment, no overlap, every live block's bytes). Sizes above 512 bytes go to AlignedMallocator.
#include "../../examples/general_purpose.hpp"

#include <alloy/aligned_mallocator.hpp>

#include "fuzz_driver.hpp"

ALLOY_FUZZ(in) {
  alloy_examples::GeneralPurpose<alloy::AlignedMallocator, 4096> a;
  alloy::fuzz::Config c;
  c.arena = 512;   // requests around the threshold: 511, 512, 513
  c.granule = 16;  // and around the class steps
  alloy::fuzz::run(a, c, in);
}
