// The memory-space rule (DESIGN.md §4) for the thread-safe list: SharedAllocatorList with NullAllocator bookkeeping
// writes its nodes into the managed allocators, so over device memory it does not compile; the message names the
// alternative.
// expect: use a host bookkeeping allocator.*AllocatorList<Factory, alloy::Mallocator>
#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/no_access_allocator.hpp>

struct DevicePools {
  using Pool = alloy::BitmappedBlock<4096, 4096, alloy::NoAccessAllocator>;
  Pool operator()(std::size_t n) const { return Pool(n < (1u << 20) ? (1u << 20) : n); }
};

int main() {
  alloy::SharedAllocatorList<DevicePools, alloy::NullAllocator> list;
  return list.allocate(64) ? 0 : 1;
}
