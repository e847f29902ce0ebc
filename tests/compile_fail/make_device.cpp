// Constructing objects in device memory from the host.
// expect: A's memory must be host-accessible
#include <alloy/make.hpp>
#include <alloy/no_access_allocator.hpp>

int main() {
  alloy::NoAccessAllocator dev;
  int* p = alloy::make<int>(dev, 1);
  alloy::dispose(dev, p);
}
