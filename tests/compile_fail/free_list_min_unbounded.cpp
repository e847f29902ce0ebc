// MinSize = unbounded (D rejects it too).
// expect: MinSize = alloy::unbounded means nothing; use MinSize = 0
#include <alloy/free_list.hpp>
#include <alloy/mallocator.hpp>

int main() {
  alloy::FreeList<alloy::Mallocator, alloy::unbounded, alloy::unbounded> a;
  return a.allocate(4) ? 0 : 1;
}
