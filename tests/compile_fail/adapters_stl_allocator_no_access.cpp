// StlAllocator over a device-like stack: containers construct elements in the memory, so it must not compile, and
// the message names the alternatives.
// expect: StlAllocator: std containers construct their elements in the memory.*device_buffer
#include <alloy/adapters/stl_allocator.hpp>
#include <alloy/no_access_allocator.hpp>

#include <vector>

int main() {
  std::vector<int, alloy::StlAllocator<int, alloy::NoAccessAllocator>> v;
  v.push_back(1);
}
