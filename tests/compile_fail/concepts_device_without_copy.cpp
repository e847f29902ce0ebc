// The generic reallocate over device memory whose allocator has no copy primitive: the host cannot move the bytes.
// expect: not host-accessible and it has no copy primitive
#include <alloy/common.hpp>

struct DeviceOnly {
  static constexpr std::size_t alignment = 256;
  static constexpr alloy::MemorySpace memory_space = alloy::MemorySpace::device;
  alloy::Block allocate(std::size_t) noexcept { return {}; }
  bool deallocate(alloy::Block) noexcept { return true; }
};

int main() {
  DeviceOnly d;
  alloy::Block b = d.allocate(16);
  (void)alloy::reallocate(d, b, 32);
}
