// The memory-space rule (DESIGN.md §4): AllocatorList's bookkeeping allocator holds its node array, which the host
// writes, so device memory (NoAccessAllocator) cannot be the bookkeeping allocator; the message names the alternative.
// expect: bookkeeping allocator must give host-accessible memory; use alloy::Mallocator
#include <alloy/allocator_list.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/region.hpp>

struct HostRegions {
  alloy::Region<alloy::Mallocator> operator()(std::size_t n) const {
    return alloy::Region<alloy::Mallocator>(n < 4096 ? 4096 : n);
  }
};

int main() {
  alloy::AllocatorList<HostRegions, alloy::NoAccessAllocator> list;
  return list.allocate(64) ? 0 : 1;
}
