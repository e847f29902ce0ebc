// SharedFreeList with ApproxMaxNodes = 0 (D rejects it too).
// expect: ApproxMaxNodes must not be 0
#include <alloy/free_list.hpp>
#include <alloy/mallocator.hpp>

int main() {
  alloy::SharedFreeList<alloy::Mallocator, 64, 64, 0> a;
  return a.allocate(64) ? 0 : 1;
}
