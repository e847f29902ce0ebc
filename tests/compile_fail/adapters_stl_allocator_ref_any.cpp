// StlAllocator over a Ref to an AnyAllocator: the Ref's memory space is the AnyAllocator's compile-time answer (device:
// it may erase device memory), and no run-time check can see through the Ref. Found in review: it compiled and put
// device memory into a std::vector. The message says to use the AnyAllocator itself (its copies share the stack).
// expect: StlAllocator: std containers construct their elements in the memory.*use the AnyAllocator itself
#include <alloy/adapters/any_allocator.hpp>
#include <alloy/adapters/stl_allocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/ref.hpp>

#include <vector>

int main() {
  alloy::AnyAllocator dev{alloy::NoAccessAllocator{}};
  alloy::Ref<alloy::AnyAllocator> ref(dev);
  std::vector<int, alloy::StlAllocator<int, alloy::Ref<alloy::AnyAllocator>>> v{ref};
  v.push_back(1);
}
