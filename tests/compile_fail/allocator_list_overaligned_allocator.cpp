// An allocator type aligned to 64 bytes (alignas on the type) cannot have its nodes in Mallocator's memory (16-byte
// alignment); the message asks for a bookkeeping allocator aligned to at least alignof of the allocator type.
// expect: use a bookkeeping allocator whose alignment is at least that
#include <alloy/allocator_list.hpp>
#include <alloy/region.hpp>

struct alignas(64) PaddedRegion {
  static constexpr std::size_t alignment = 16;
  alloy::Region<alloy::Mallocator> r;
  alloy::Block allocate(std::size_t n) noexcept { return r.allocate(n); }
};
struct Factory {
  PaddedRegion operator()(std::size_t n) const { return PaddedRegion{alloy::Region<alloy::Mallocator>(n)}; }
};

int main() {
  alloy::AllocatorList<Factory> list;
  return list.allocate(64) ? 0 : 1;
}
