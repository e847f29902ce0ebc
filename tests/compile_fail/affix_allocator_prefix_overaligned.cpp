// A Prefix more aligned than the parent's blocks (D rejects it too).
// expect: parent's alignment is smaller than alignof\(Prefix\)
#include <alloy/affix_allocator.hpp>
#include <alloy/mallocator.hpp>

struct alignas(64) Line {
  char bytes[64];
};

int main() {
  alloy::AffixAllocator<alloy::Mallocator, Line> a;
  return a.allocate(8) ? 0 : 1;
}
