// Bucketizer over buckets whose allocate returns void*: not an alloy allocator, and the block says so in a
// static_assert.
// expect: Bucketizer: A must be an alloy allocator \(a type with `static constexpr std::size_t alignment`.*a type whose allocate returns void\* is not one
#include <alloy/bucketizer.hpp>
#include <cstddef>
#include <cstdlib>

struct VoidStarAllocator {
  static constexpr std::size_t alignment = 16;
  void* allocate(std::size_t n) noexcept { return std::malloc(n); }
};

int main() {
  alloy::Bucketizer<VoidStarAllocator, 1, 256, 64> a;
  return a.allocate(16) ? 0 : 1;
}
