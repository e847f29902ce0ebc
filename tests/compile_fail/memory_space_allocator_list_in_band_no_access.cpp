// The memory-space rule (DESIGN.md §4): AllocatorList with NullAllocator bookkeeping writes its nodes into the
// memory it manages, so it needs host-accessible allocators; over NoAccessAllocator (device memory) it must not
// compile, and the message names the alternative (a host bookkeeping allocator).
// expect: use a host bookkeeping allocator.*AllocatorList<Factory, alloy::Mallocator>
#include <alloy/allocator_list.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/region.hpp>

struct DeviceRegions {
  alloy::Region<alloy::NoAccessAllocator> operator()(std::size_t n) const {
    return alloy::Region<alloy::NoAccessAllocator>(n < (1u << 20) ? (1u << 20) : n);
  }
};

int main() {
  alloy::AllocatorList<DeviceRegions, alloy::NullAllocator> list;
  return list.allocate(64) ? 0 : 1;
}
