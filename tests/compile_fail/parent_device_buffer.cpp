// device_buffer<std::allocator<std::byte>>: a std allocator is not an alloy allocator, and the buffer says so in a
// static_assert (the header needs no CUDA header).
// expect: device_buffer: A must be an alloy allocator \(a type with `static constexpr std::size_t alignment`.*a std allocator or a type whose allocate returns void\* is not one
#include <alloy/device_buffer.hpp>
#include <cstddef>
#include <memory>

int main() {
  alloy::device_buffer<std::allocator<std::byte>> b(64, alloy::default_stream);
  return b.size() == 64 ? 0 : 1;
}
