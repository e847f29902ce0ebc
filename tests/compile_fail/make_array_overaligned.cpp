// make_array<T> of an over-aligned T over an allocator without aligned_allocate.
// expect: alignof\(T\) is larger than A::alignment and A has no aligned_allocate
#include <alloy/make.hpp>
#include <alloy/mallocator.hpp>

struct alignas(32) Vec {
  float lanes[8];
};

int main() {
  alloy::Mallocator m;
  std::span<Vec> s = alloy::make_array<Vec>(m, 4);
  alloy::dispose(m, s);
}
