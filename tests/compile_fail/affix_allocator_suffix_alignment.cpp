// A 4-byte Prefix leaves the payload 4-aligned, too little for an 8-byte Suffix (D's restriction).
// expect: payload alignment is not a multiple of alignof\(Suffix\)
#include <alloy/affix_allocator.hpp>
#include <alloy/mallocator.hpp>

#include <cstdint>

int main() {
  alloy::AffixAllocator<alloy::Mallocator, std::uint32_t, std::uint64_t> a;
  return a.allocate(8) ? 0 : 1;
}
