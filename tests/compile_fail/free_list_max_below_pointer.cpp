// A FreeList whose blocks cannot hold the list's pointer.
// expect: MaxSize must hold a pointer
#include <alloy/free_list.hpp>
#include <alloy/mallocator.hpp>

int main() {
  alloy::FreeList<alloy::Mallocator, 4> a;
  return a.allocate(4) ? 0 : 1;
}
