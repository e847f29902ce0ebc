// Quantizer<std::allocator<std::byte>, RoundUpToMultipleOf<64>>:
// std::allocator is not an alloy allocator, and the block says so in a static_assert.
// expect: Quantizer: Parent must be an alloy allocator \(a type with `static constexpr std::size_t alignment`.*a std allocator, a std::pmr::memory_resource or a type whose allocate returns void\* is not one
#include <alloy/quantizer.hpp>
#include <cstddef>
#include <memory>

int main() {
  alloy::Quantizer<std::allocator<std::byte>, alloy::RoundUpToMultipleOf<64>> q;
  return q.allocate(16) ? 0 : 1;
}
