// FreeList over a near miss: allocate returns void*, not an alloy::Block, so it is not an alloy allocator, and the
// block says so in a static_assert (one sentence, not a concept-satisfaction trace).
// expect: [ "]FreeList: Parent must be an alloy allocator \(a type with `static constexpr std::size_t alignment`.*a type whose allocate returns void\* is not one
#include <alloy/free_list.hpp>
#include <cstddef>
#include <cstdlib>

struct VoidStarAllocator {
  static constexpr std::size_t alignment = 16;
  void* allocate(std::size_t n) noexcept { return std::malloc(n); }
};

int main() {
  alloy::FreeList<VoidStarAllocator, 64> fl;
  return fl.allocate(64) ? 0 : 1;
}
