// MaxSize = unbounded with a lower bound: D would ask its parent for SIZE_MAX bytes on every miss.
// expect: unchecked list and needs MinSize = 0
#include <alloy/free_list.hpp>
#include <alloy/mallocator.hpp>

int main() {
  alloy::FreeList<alloy::Mallocator, 16, alloy::unbounded> a;
  return a.allocate(16) ? 0 : 1;
}
