// AllocatorList's Factory is a class type (a captureless lambda's type works), not a function pointer type.
// expect: Factory must be a class type
#include <alloy/allocator_list.hpp>
#include <alloy/region.hpp>

alloy::Region<alloy::Mallocator> make(std::size_t n) { return alloy::Region<alloy::Mallocator>(n); }

int main() {
  alloy::AllocatorList<decltype(&make)> list;
  return list.allocate(64) ? 0 : 1;
}
