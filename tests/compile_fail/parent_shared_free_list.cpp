// SharedFreeList<std::allocator<int>, 64>:
// std::allocator is not an alloy allocator, and the block says so in a static_assert.
// expect: SharedFreeList: Parent must be an alloy allocator \(.*e\.g\. alloy::Mallocator\); a std allocator
#include <alloy/free_list.hpp>
#include <memory>

int main() {
  alloy::SharedFreeList<std::allocator<int>, 64> fl;
  return fl.allocate(64) ? 0 : 1;
}
