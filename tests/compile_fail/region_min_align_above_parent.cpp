// A Region whose MinAlign exceeds its parent's alignment needs aligned_allocate from the parent; Mallocator has none.
// expect: MinAlign is larger than Parent::alignment and Parent has no aligned_allocate; use a parent with aligned_allocate
#include <alloy/mallocator.hpp>
#include <alloy/region.hpp>

int main() {
  alloy::Region<alloy::Mallocator, 64> r(4096);
  return r.allocate(1) ? 0 : 1;
}
