// In-band AllocatorList (NullAllocator bookkeeping) writes its nodes into the allocators it manages; over a device-like
// pool (BitmappedBlock over NoAccessAllocator) it must not compile, and the message names a host bookkeeping allocator.
// expect: use a host bookkeeping allocator, e.g. AllocatorList<Factory, alloy::Mallocator>
#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/no_access_allocator.hpp>

struct Pools {
  alloy::BitmappedBlock<256, 256, alloy::NoAccessAllocator> operator()(std::size_t n) const {
    return alloy::BitmappedBlock<256, 256, alloy::NoAccessAllocator>(n < 65536 ? 65536 : n);
  }
};

int main() {
  alloy::AllocatorList<Pools, alloy::NullAllocator> list;
  return list.allocate(64) ? 0 : 1;
}
