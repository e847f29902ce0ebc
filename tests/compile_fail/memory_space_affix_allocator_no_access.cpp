// The memory-space rule (DESIGN.md §4): AffixAllocator constructs its affixes in the parent's memory, so over alloy::NoAccessAllocator (device memory) it must not compile; the message names the alternative.
// expect: parent must be host-accessible.*keep the per-block data on the host
#include <alloy/affix_allocator.hpp>
#include <alloy/no_access_allocator.hpp>

int main() {
  alloy::AffixAllocator<alloy::NoAccessAllocator, unsigned> a;
  return a.allocate(64) ? 0 : 1;
}
