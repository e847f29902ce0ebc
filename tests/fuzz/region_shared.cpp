// SharedRegion<Mallocator>, one thread, in lockstep with BumpModel.
#include <alloy/mallocator.hpp>
#include <alloy/region.hpp>

#include "fuzz_driver.hpp"
#include "support/bump_model.hpp"

ALLOY_FUZZ(in) {
  alloy::SharedRegion<alloy::Mallocator> a(16 * (in.u16() % 1025));
  alloy::test::BumpModel<16, false> m(a.data(), a.capacity());
  alloy::fuzz::Config c;
  c.arena = a.capacity();
  c.lo = a.data();
  c.span = a.capacity();
  c.padding_stays = true;
  alloy::fuzz::run(a, m, c, in);
}
