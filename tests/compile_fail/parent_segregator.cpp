// Segregator<64, Small, Mallocator> where Small's allocate returns void*: not an alloy allocator, and the binary
// Segregator says which part is wrong in a static_assert.
// expect: Segregator: Small must be an alloy allocator \(a type with `static constexpr std::size_t alignment`.*a type whose allocate returns void\* is not one
#include <alloy/mallocator.hpp>
#include <alloy/segregator.hpp>
#include <cstddef>
#include <cstdlib>

struct VoidStarAllocator {
  static constexpr std::size_t alignment = 16;
  void* allocate(std::size_t n) noexcept { return std::malloc(n); }
};

int main() {
  alloy::Segregator<64, VoidStarAllocator, alloy::Mallocator> a;
  return a.allocate(16) ? 0 : 1;
}
