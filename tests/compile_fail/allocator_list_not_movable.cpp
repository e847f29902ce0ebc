// AllocatorList moves its allocators when its node array grows: a factory of InSituRegions (not movable) is refused
// with a message that says what to use.
// expect: allocators must be nothrow-move-constructible
#include <alloy/allocator_list.hpp>
#include <alloy/region.hpp>

struct Stacks {
  alloy::InSituRegion<4096> operator()(std::size_t) const { return {}; }
};

int main() {
  alloy::AllocatorList<Stacks> list;
  return list.allocate(64) ? 0 : 1;
}
