// RecordingAllocator<std::allocator<std::byte>>:
// std::allocator is not an alloy allocator, and the block says so in a static_assert.
// expect: RecordingAllocator: Parent must be an alloy allocator
#include <alloy/recording_allocator.hpp>
#include <cstddef>
#include <memory>

int main() {
  alloy::RecordingAllocator<std::allocator<std::byte>> r;
  return r.allocate(16) ? 0 : 1;
}
