#pragma once
// Shared by the combinator tests (FallbackAllocator, Segregator, Bucketizer, Quantizer):
//   StreamHeap: a stream-ordered heap over malloc that counts the stream-ordered calls it gets, and refuses sizes
//     above its Limit, so a combinator's forwarding of allocate(stream, n) / deallocate(stream, b) can be checked.
//   bump_reallocate / bump_aligned_reallocate: what alloy's generic reallocate does on a Region, restated on a
//     BumpModel (expand when growing, else allocate, then give back), for the models of stacks with Region parts.
#include <alloy/common.hpp>

#include <cstdlib>

#include "support/bump_model.hpp"

namespace alloy::test {

template <std::size_t Limit = SIZE_MAX>
struct StreamHeap {
  static constexpr std::size_t alignment = platform_alignment;
  static inline std::size_t stream_allocs = 0, stream_frees = 0, live = 0;
  Block allocate(std::size_t n) noexcept {
    if (n == 0 || n > Limit || n > (std::size_t{1} << 40)) return {};
    void* p = std::malloc(n);
    if (p) ++live;
    return p ? Block{p, n} : Block{};
  }
  bool deallocate(Block b) noexcept {
    if (!b) return true;
    std::free(b.ptr);
    --live;
    return true;
  }
  Block allocate(stream_view, std::size_t n) noexcept {
    ++stream_allocs;
    return allocate(n);
  }
  bool deallocate(stream_view, Block b) noexcept {
    ++stream_frees;
    return deallocate(b);
  }
};

template <class Bump>
bool bump_reallocate(Bump& m, Block& b, std::size_t n) {
  if (b.size == n) return true;
  if constexpr (requires { m.expand(b, n); })
    if (n > b.size && m.expand(b, n - b.size)) return true;
  const Block nb = m.allocate(n);
  if (!nb) return false;
  m.deallocate(b);
  b = nb;
  return true;
}

}  // namespace alloy::test
