// AffixAllocator<std::allocator<int>, std::size_t>:
// std::allocator is not an alloy allocator, and the block says so in a static_assert.
// expect: AffixAllocator: A must be an alloy allocator \(a type with `static constexpr std::size_t alignment`.*a std allocator, a std::pmr::memory_resource or a type whose allocate returns void\* is not one
#include <alloy/affix_allocator.hpp>
#include <cstddef>
#include <memory>

int main() {
  alloy::AffixAllocator<std::allocator<int>, std::size_t> a;
  return a.allocate(16) ? 0 : 1;
}
