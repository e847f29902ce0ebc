// CudaMrResource over an AnyAllocator: cuda::mr properties are compile-time, the erased stack's memory space is
// known only at run time. Found in review: it declared host_accessible over device memory.
// needs: cuda
// expect: CudaMrResource: cuda::mr properties.*wrap the concrete stack instead
#include <alloy/adapters/any_allocator.hpp>
#include <alloy/adapters/cuda_mr_resource.hpp>
#include <alloy/no_access_allocator.hpp>

int main() {
  alloy::AnyAllocator dev{alloy::NoAccessAllocator{}};
  alloy::CudaMrResource<alloy::AnyAllocator> r(dev);
  return r.allocate_sync(64, 16) != nullptr;
}
