// An adaptive FreeList gives blocks back to its parent, which here cannot take them.
// expect: Adaptive::yes gives list blocks back to Parent, which needs deallocate
#include <alloy/free_list.hpp>

struct NoFree {  // allocate only
  static constexpr std::size_t alignment = 16;
  alloy::Block allocate(std::size_t) noexcept { return {}; }
};

int main() {
  alloy::FreeList<NoFree, 64, 64, alloy::Adaptive::yes> a;
  return a.allocate(64) ? 0 : 1;
}
