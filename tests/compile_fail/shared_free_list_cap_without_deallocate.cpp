// A node cap sends blocks back to the parent, which here cannot take them.
// expect: finite ApproxMaxNodes gives the blocks beyond it back to Parent, which needs deallocate
#include <alloy/free_list.hpp>

struct NoFree {  // allocate only
  static constexpr std::size_t alignment = 16;
  alloy::Block allocate(std::size_t) noexcept { return {}; }
};

int main() {
  alloy::SharedFreeList<NoFree, 64, 64, 8> a;
  return a.allocate(64) ? 0 : 1;
}
