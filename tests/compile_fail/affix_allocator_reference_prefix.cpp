// An affix must be an object type (or void): a reference cannot be placed in memory.
// expect: Prefix and Suffix are object types or void
#include <alloy/affix_allocator.hpp>
#include <alloy/mallocator.hpp>

int main() {
  alloy::AffixAllocator<alloy::Mallocator, int&> a;
  return a.allocate(8) ? 0 : 1;
}
