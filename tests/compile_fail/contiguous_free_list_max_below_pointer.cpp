// ContiguousFreeList items too small for the list's pointer.
// expect: MaxSize must hold a pointer
#include <alloy/free_list.hpp>
#include <alloy/mallocator.hpp>

int main() {
  alloy::ContiguousFreeList<alloy::Mallocator, 2> a(4096);
  return a.allocate(2) ? 0 : 1;
}
