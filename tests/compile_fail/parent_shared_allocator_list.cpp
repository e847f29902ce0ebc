// SharedAllocatorList<F, std::allocator<std::byte>> (the bookkeeping allocator):
// std::allocator is not an alloy allocator, and the block says so in a static_assert.
// expect: SharedAllocatorList: BookkeepingAllocator must be an alloy allocator
#include <alloy/allocator_list.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/region.hpp>
#include <cstddef>
#include <memory>

struct F {
  alloy::Region<alloy::Mallocator> operator()(std::size_t n) const { return alloy::Region<alloy::Mallocator>(n); }
};

int main() {
  alloy::SharedAllocatorList<F, std::allocator<std::byte>> list;
  return list.allocate(16) ? 0 : 1;
}
