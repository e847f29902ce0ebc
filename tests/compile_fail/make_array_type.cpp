// make<T[N]>: arrays go through make_array.
// expect: use alloy::make_array<T>\(a, n\) instead
#include <alloy/make.hpp>
#include <alloy/mallocator.hpp>

int main() {
  alloy::Mallocator m;
  auto* p = alloy::make<int[4]>(m);
  (void)p;
}
