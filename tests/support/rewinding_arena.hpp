#pragma once
// A host arena that takes every block back: a Region over malloc that rewinds when its last live block goes. It lets
// the AllocatorList policies (the empty-allocator rule, slot reuse) run under long random sequences in which every
// deallocation is accepted. WithEmpty: whether it declares empty() (the list's policy differs without it).
#include <alloy/mallocator.hpp>
#include <alloy/region.hpp>

#include <cstddef>

namespace alloy::test {

template <bool WithEmpty>
struct RewindingArena {
  Region<Mallocator> r;
  std::size_t live = 0;
  static constexpr std::size_t alignment = 16;
  Block allocate(std::size_t n) noexcept {
    const Block b = r.allocate(n);
    live += b ? 1 : 0;
    return b;
  }
  bool deallocate(Block b) noexcept {
    if (!b) return true;
    if (r.owns(b) != Ternary::yes || live == 0) return false;  // foreign, or more frees than allocations
    r.deallocate(b);
    if (--live == 0) r.deallocate_all();
    return true;
  }
  Ternary owns(Block b) const noexcept { return r.owns(b); }
  Ternary empty() const noexcept requires WithEmpty { return to_ternary(live == 0); }
};

}  // namespace alloy::test
