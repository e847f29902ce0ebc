// In band (Bookkeeping = NullAllocator) the nodes live in the allocators themselves: an allocator type aligned to 64
// bytes whose memory is aligned to 16 cannot hold them; the same message as out of band (holder_aligns_nodes).
// expect: use a bookkeeping allocator whose alignment is at least that
#include <alloy/allocator_list.hpp>
#include <alloy/null_allocator.hpp>
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
  alloy::AllocatorList<Factory, alloy::NullAllocator> list;
  return list.allocate(64) ? 0 : 1;
}
