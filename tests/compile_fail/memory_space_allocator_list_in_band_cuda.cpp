// The memory-space rule (DESIGN.md §4) over real device memory: in-band AllocatorList (NullAllocator bookkeeping)
// of Regions over CudaMallocator does not compile, and the message names the alternative.
// needs: cuda
// expect: use a host bookkeeping allocator.*AllocatorList<Factory, alloy::Mallocator>
#include <alloy/allocator_list.hpp>
#include <alloy/cuda_mallocator.hpp>
#include <alloy/region.hpp>

struct DeviceRegions {
  alloy::Region<alloy::CudaMallocator> operator()(std::size_t n) const {
    return alloy::Region<alloy::CudaMallocator>(n < (1u << 24) ? (1u << 24) : n);
  }
};

int main() {
  alloy::AllocatorList<DeviceRegions, alloy::NullAllocator> list;
  return list.allocate(64) ? 0 : 1;
}
