// ContiguousFreeList<std::allocator<std::byte>, 64>:
// std::allocator is not an alloy allocator, and the block says so in a static_assert.
// expect: ContiguousFreeList: Parent must be an alloy allocator \(.*alloy::NullAllocator for a caller's span\); a std allocator
#include <alloy/free_list.hpp>
#include <cstddef>
#include <memory>

int main() {
  alloy::ContiguousFreeList<std::allocator<std::byte>, 64> fl(4096);
  return fl.allocate(64) ? 0 : 1;
}
