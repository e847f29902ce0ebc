// SharedRegion<std::allocator<std::byte>>:
// std::allocator is not an alloy allocator, and the block says so in a static_assert.
// expect: SharedRegion: Parent must be an alloy allocator
#include <alloy/region.hpp>
#include <cstddef>
#include <memory>

int main() {
  alloy::SharedRegion<std::allocator<std::byte>> r(1024);
  return r.allocate(16) ? 0 : 1;
}
