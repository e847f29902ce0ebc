// A Prefix whose constructor may throw: allocate is noexcept.
// expect: Prefix must be nothrow default-constructible
#include <alloy/affix_allocator.hpp>
#include <alloy/mallocator.hpp>


struct Tag {
  Tag() {}  // not noexcept
  int n = 0;
};

int main() {
  alloy::AffixAllocator<alloy::Mallocator, Tag> a;
  return a.allocate(8) ? 0 : 1;
}
