// Checked over a std::pmr::memory_resource: a pmr resource is not an alloy allocator (alloy::PmrResource makes one
// from an alloy allocator, not the other way), and the block says so in a static_assert.
// expect: alloy::Checked: A must be an alloy allocator \(a type with `static constexpr std::size_t alignment`.*a std::pmr::memory_resource
#include <alloy/checked.hpp>
#include <memory_resource>

int main() {
  alloy::Checked<std::pmr::unsynchronized_pool_resource> a;
  return a.allocate(16) ? 0 : 1;
}
