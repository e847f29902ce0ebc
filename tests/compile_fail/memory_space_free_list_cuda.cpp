// The memory-space rule (DESIGN.md §4): free_list threads its list through the free blocks, so over alloy::CudaMallocator (device memory) it must not compile, and the message names BitmappedBlock.
// needs: cuda
// expect: Parent must be host-accessible.*alloy::BitmappedBlock
#include <alloy/free_list.hpp>
#include <alloy/cuda_mallocator.hpp>

using P = alloy::CudaMallocator;

int main() {
  alloy::FreeList<P, 64> a;
  return a.allocate(64) ? 0 : 1;
}
