// PmrResource over a device-like stack: pmr containers construct objects in the memory; refused, alternatives named.
// expect: PmrResource: std::pmr containers construct objects in the memory.*CudaMrResource
#include <alloy/adapters/pmr_resource.hpp>
#include <alloy/no_access_allocator.hpp>

int main() { alloy::PmrResource<alloy::NoAccessAllocator> r; }
