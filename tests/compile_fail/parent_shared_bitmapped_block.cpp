// SharedBitmappedBlock<64, 64, std::allocator<std::byte>>:
// std::allocator is not an alloy allocator, and the block says so in a static_assert.
// expect: BitmappedBlock: Parent must be an alloy allocator
#include <alloy/bitmapped_block.hpp>
#include <cstddef>
#include <memory>

int main() {
  alloy::SharedBitmappedBlock<64, 64, std::allocator<std::byte>> a(4096);
  return a.allocate(16) ? 0 : 1;
}
