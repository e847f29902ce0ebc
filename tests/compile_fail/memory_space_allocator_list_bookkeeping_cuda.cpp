// The memory-space rule (DESIGN.md §4) over real device memory: CudaMallocator cannot hold AllocatorList's node
// array (the host writes it); the message names the alternative.
// needs: cuda
// expect: bookkeeping allocator must give host-accessible memory; use alloy::Mallocator
#include <alloy/allocator_list.hpp>
#include <alloy/cuda_mallocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/region.hpp>

struct HostRegions {
  alloy::Region<alloy::Mallocator> operator()(std::size_t n) const {
    return alloy::Region<alloy::Mallocator>(n < 4096 ? 4096 : n);
  }
};

int main() {
  alloy::AllocatorList<HostRegions, alloy::CudaMallocator> list;
  return list.allocate(64) ? 0 : 1;
}
