// The memory-space rule at the edge: a device_buffer over device memory whose allocator has no copy primitive, in a
// translation unit without the CUDA parents, has no way to move bytes; it must not compile, and the message says what
// to do instead.
// expect: give it copy\(dst, src, n, stream\), or include <alloy/cuda_mallocator.hpp>
#include <alloy/device_buffer.hpp>

struct DeviceWithoutCopy {  // device memory, no copy primitive
  static constexpr std::size_t alignment = 256;
  static constexpr alloy::MemorySpace memory_space = alloy::MemorySpace::device;
  alloy::Block allocate(std::size_t) noexcept { return {}; }
};

int main() {
  const char src[4] = {};
  alloy::device_buffer<DeviceWithoutCopy> b(src, sizeof src, alloy::default_stream);
  return b.size() == 4 ? 0 : 1;
}
