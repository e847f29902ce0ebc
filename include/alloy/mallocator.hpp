#pragma once
/// \file alloy/mallocator.hpp
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include <alloy/common.hpp>

namespace alloy {

/// Mallocator
///
/// Semantics: the C heap: `malloc`, `realloc`, `free`.
/// Capabilities: allocate, reallocate (`realloc`; size 0 frees), deallocate. No owns (the C heap cannot tell), no
/// expand (`realloc` may move).
/// Alignment: platform_alignment. Thread safety: thread-safe (the C heap is). Stateless: `Mallocator::instance`.
/// Failure: an empty Block when `malloc` returns null, and for n == 0.
/// Example:
/// ```cpp
/// alloy::Block b = alloy::Mallocator::instance.allocate(100);
/// CHECK(b.size == 100);
/// alloy::Mallocator m;
/// CHECK(m.reallocate(b, 200));
/// CHECK(m.deallocate(b));
/// ```
struct Mallocator {
  static constexpr std::size_t alignment = platform_alignment;
  static const Mallocator instance;

  Block allocate(std::size_t n) const noexcept {
    if (n == 0 || n > PTRDIFF_MAX) return {};  // no object is larger than PTRDIFF_MAX
    void* p = std::malloc(n);
    return p ? Block{p, n} : Block{};
  }
  bool deallocate(Block b) const noexcept {
    std::free(b.ptr);
    return true;
  }
  bool reallocate(Block& b, std::size_t n) const noexcept {
    if (n == 0) {
      std::free(b.ptr);
      b = {};
      return true;
    }
    if (n > PTRDIFF_MAX) return false;
    if (b && b.size == n) return true;  // a no-op (realloc may move even then: under ASan it always does)
    void* p = std::realloc(b.ptr, n);
    if (!p) return false;
    b = {p, n};
    return true;
  }
};
inline const Mallocator Mallocator::instance{};

}  // namespace alloy
