// InSituRegion<4096, 16> (it grows downwards) in lockstep with BumpModel.
#include <alloy/region.hpp>

#include "fuzz_driver.hpp"
#include "support/bump_model.hpp"

ALLOY_FUZZ(in) {
  alloy::InSituRegion<4096, 16> a;
  const alloy::Block all = a.allocate_all();  // where its memory is
  a.deallocate_all();
  alloy::test::BumpModel<16, true> m(all.ptr, all.size);
  alloy::fuzz::Config c;
  c.arena = a.capacity();
  c.lo = all.ptr;
  c.span = all.size;
  c.padding_stays = true;
  alloy::fuzz::run(a, m, c, in);
}
