// FallbackAllocator<Region<>, std::allocator<std::byte>>: the fallback part is a std allocator, not an alloy
// allocator, and the block says so in a static_assert.
// expect: FallbackAllocator: Fallback must be an alloy allocator \(.*e\.g\. alloy::Mallocator\); a std allocator
#include <alloy/fallback_allocator.hpp>
#include <alloy/region.hpp>
#include <cstddef>
#include <memory>

int main() {
  alloy::FallbackAllocator<alloy::Region<>, std::allocator<std::byte>> a;
  return a.allocate(16) ? 0 : 1;
}
