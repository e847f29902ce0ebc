// An over-aligned T over a stack that has no aligned_allocate: the message says what to stack instead.
// expect: alignof\(T\) exceeds the stack's alignment and the stack has no aligned_allocate.*AlignedMallocator
#include <alloy/adapters/stl_allocator.hpp>
#include <alloy/mallocator.hpp>

#include <vector>

struct alignas(64) Line {
  char bytes[64];
};

int main() {
  std::vector<Line, alloy::StlAllocator<Line, alloy::Mallocator>> v;
  v.resize(4);
}
