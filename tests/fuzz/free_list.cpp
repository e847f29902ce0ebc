// FreeList<Region<Mallocator>, 17, 64> in lockstep with FreeListModel (a LIFO stack in front of BumpModel).
#include <alloy/free_list.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/region.hpp>

#include "fuzz_driver.hpp"
#include "support/free_list_model.hpp"

ALLOY_FUZZ(in) {
  alloy::FreeList<alloy::Region<alloy::Mallocator>, 17, 64> a(alloy::Region<alloy::Mallocator>(16 * (in.u8() % 257)));
  alloy::test::FreeListModel<17, 64> m(a.parent().data(), a.parent().capacity());
  alloy::fuzz::Config c;
  c.arena = a.parent().capacity();
  c.lo = a.parent().data();
  c.span = c.arena;
  c.padding_stays = true;
  alloy::fuzz::run(a, m, c, in);
}
