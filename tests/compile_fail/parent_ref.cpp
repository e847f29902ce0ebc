// Ref<std::allocator<std::byte>>: std::allocator is not an alloy allocator, and the block says so in a static_assert.
// expect: Ref<A>: A must be an alloy allocator
#include <alloy/ref.hpp>
#include <cstddef>
#include <memory>

int main() {
  std::allocator<std::byte> a;
  alloy::Ref<std::allocator<std::byte>> r(a);
  return r.allocate(16) ? 0 : 1;
}
