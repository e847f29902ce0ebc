// StlAllocator over std::allocator: a standard allocator, not an alloy one. The first diagnostic is one sentence
// saying what an alloy allocator is (not a concept-satisfaction trace).
// expect: StlAllocator: A must be an alloy allocator: a type with `static constexpr std::size_t alignment`.*std::allocator and other standard allocators are not alloy allocators
#include <alloy/adapters/stl_allocator.hpp>

#include <memory>
#include <vector>

int main() {
  std::vector<int, alloy::StlAllocator<int, std::allocator<int>>> v;
  v.push_back(1);
}
