// In-band AllocatorList over real device memory: BitmappedBlock pools over CudaMallocator cannot hold the list's nodes.
// needs: cuda
// expect: use a host bookkeeping allocator, e.g. AllocatorList<Factory, alloy::Mallocator>
#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/cuda_mallocator.hpp>

struct Pools {
  alloy::BitmappedBlock<256, 256, alloy::CudaMallocator> operator()(std::size_t n) const {
    return alloy::BitmappedBlock<256, 256, alloy::CudaMallocator>(n < (1u << 20) ? (1u << 20) : n);
  }
};

int main() {
  alloy::AllocatorList<Pools, alloy::NullAllocator> list;
  return list.allocate(64) ? 0 : 1;
}
