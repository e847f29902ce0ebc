// PmrResource over a Region whose parent is an AnyAllocator: the Region inherits the AnyAllocator's compile-time
// memory space (device: it may erase device memory) and has no run-time answer. Found in review: it compiled and
// handed device memory to std::pmr containers.
// expect: PmrResource: std::pmr containers construct objects in the memory.*use the AnyAllocator itself
#include <alloy/adapters/any_allocator.hpp>
#include <alloy/adapters/pmr_resource.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/region.hpp>

int main() {
  alloy::PmrResource<alloy::Region<alloy::AnyAllocator>> r(alloy::AnyAllocator{alloy::NoAccessAllocator{}},
                                                          std::size_t{1} << 16);
  return r.allocate(16) != nullptr;
}
