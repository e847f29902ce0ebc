// MinSize > MaxSize: no size could use the list.
// expect: MinSize > MaxSize: no size would use the list
#include <alloy/free_list.hpp>
#include <alloy/mallocator.hpp>

int main() {
  alloy::FreeList<alloy::Mallocator, 128, 64> a;
  return a.allocate(64) ? 0 : 1;
}
