// The memory-space rule in alloy::copy: a device stack whose allocator has no copy primitive cannot be copied into by
// the host; the message names the fix.
// expect: not host-accessible and it has no copy primitive; give it a copy\(dst, src, n, stream\) member
#include <alloy/common.hpp>

struct DeviceWithoutCopy {
  static constexpr std::size_t alignment = 256;
  static constexpr alloy::MemorySpace memory_space = alloy::MemorySpace::device;
  alloy::Block allocate(std::size_t) noexcept { return {}; }
};

int main() {
  DeviceWithoutCopy d;
  char a[4] = {}, b[4] = {};
  return alloy::copy(d, a, b, 4) ? 0 : 1;
}
