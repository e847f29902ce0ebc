// The memory-space rule (DESIGN.md §4) over real device memory: SharedBitmappedBlock over CudaMallocator with
// CudaMallocator as the bitmap's Bookkeeping allocator does not compile; the message names the alternative.
// needs: cuda
// expect: keeps its bitmap in host memory from Bookkeeping.*host-accessible.*\(Mallocator\)
#include <alloy/bitmapped_block.hpp>
#include <alloy/cuda_mallocator.hpp>

int main() {
  alloy::SharedBitmappedBlock<256, 256, alloy::CudaMallocator, alloy::Multiblock::yes, alloy::CudaMallocator> b(
      1 << 20);
  return b.allocate(256) ? 0 : 1;
}
