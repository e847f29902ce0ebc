// The README's example: a pool of 64 MiB chunks of 256-byte blocks, growing chunk by chunk on demand.
// The same stack over alloy::CudaMallocator pools device memory (examples/device_pool.cu).
#include <alloy/alloy.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>

struct Chunk {  // each chunk: 64 MiB of pages, its bitmap at its start
  auto operator()(std::size_t n) const {
    return alloy::BitmappedBlock<256, 256, alloy::MmapAllocator>(std::max(n, std::size_t{64} << 20));
  }
};

int main() {
  alloy::AllocatorList<Chunk> pool;
  alloy::Block b = pool.allocate(1000);  // 4 blocks of the first chunk; exactly 1000 bytes reported
  if (!b || b.size != 1000 || !alloy::is_aligned(b.ptr, 256)) return 1;
  std::memset(b.ptr, 0xab, b.size);
  alloy::Block big = pool.allocate(100 << 20);  // larger than a chunk: the factory makes a 100 MiB one
  if (!big || pool.allocator_count() != 2) return 1;
  std::printf("quickstart: %zu bytes at %p, %zu bytes at %p, %zu chunks\n", b.size, b.ptr, big.size, big.ptr,
              pool.allocator_count());
  if (!pool.deallocate(big) || !pool.deallocate(b)) return 1;
  std::printf("quickstart: empty again: %s, chunks kept: %zu\n",
              pool.empty() == alloy::Ternary::yes ? "yes" : "no", pool.allocator_count());
  return pool.empty() == alloy::Ternary::yes ? 0 : 1;
}
