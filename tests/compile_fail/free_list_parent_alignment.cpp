// A parent whose blocks are not aligned for the list's pointer.
// expect: Parent::alignment must be at least alignof\(void\*\)
#include <alloy/free_list.hpp>

struct Bytes {  // allocate only, 4-byte alignment
  static constexpr std::size_t alignment = 4;
  alloy::Block allocate(std::size_t) noexcept { return {}; }
};

int main() {
  alloy::FreeList<Bytes, 64> a;
  return a.allocate(64) ? 0 : 1;
}
