// make<T> of a type more aligned than the allocator, over an allocator without aligned_allocate.
// expect: alignof\(T\) is larger than A::alignment and A has no aligned_allocate
#include <alloy/make.hpp>
#include <alloy/mallocator.hpp>

struct alignas(64) Wide {
  char bytes[64];
};

int main() {
  alloy::Mallocator m;
  Wide* w = alloy::make<Wide>(m);
  alloy::dispose(m, w);
}
