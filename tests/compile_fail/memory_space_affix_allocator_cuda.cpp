// The memory-space rule (DESIGN.md §4): AffixAllocator constructs its affixes in the parent's memory, so over alloy::CudaMallocator (device memory) it must not compile; the message names the alternative.
// needs: cuda
// expect: parent must be host-accessible.*keep the per-block data on the host
#include <alloy/affix_allocator.hpp>
#include <alloy/cuda_mallocator.hpp>

int main() {
  alloy::AffixAllocator<alloy::CudaMallocator, unsigned> a;
  return a.allocate(64) ? 0 : 1;
}
