// Built against an installed alloy: every header comes from one merged include/alloy/ directory.
#include <alloy/alloy.hpp>

#include <cstdio>

int main() {
  alloy::Mallocator m;
  alloy::Block b = m.allocate(64);
  if (b.size != 64 || !m.deallocate(b)) return 1;
  std::puts("consumer: ok");
  return 0;
}
