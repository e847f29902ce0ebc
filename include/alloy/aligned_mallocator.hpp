#pragma once
/// \file alloy/aligned_mallocator.hpp
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include <alloy/common.hpp>
#include <alloy/mallocator.hpp>

namespace alloy {

/// AlignedMallocator
///
/// Semantics: the C heap with alignment: `posix_memalign` and `free`.
/// Capabilities: allocate, aligned_allocate (any power of two; below `sizeof(void*)` it is raised to that),
/// reallocate (`realloc`, platform alignment kept), aligned_reallocate (allocate, copy, free: POSIX has no aligned
/// realloc), deallocate. No owns, no expand.
/// Alignment: platform_alignment. Thread safety: thread-safe. Stateless: `AlignedMallocator::instance`.
/// Failure: an empty Block when the C heap fails, for n == 0, for an alignment that is not a power of two, and when
/// `n + a` exceeds PTRDIFF_MAX.
/// Example:
/// ```cpp
/// alloy::AlignedMallocator a;
/// alloy::Block b = a.aligned_allocate(100, 4096);
/// CHECK(alloy::is_aligned(b.ptr, 4096));
/// CHECK(a.aligned_reallocate(b, 9000, 4096));
/// CHECK(alloy::is_aligned(b.ptr, 4096));
/// CHECK(a.deallocate(b));
/// ```
struct AlignedMallocator {
  static constexpr std::size_t alignment = platform_alignment;
  static const AlignedMallocator instance;

  Block allocate(std::size_t n) const noexcept { return aligned_allocate(n, alignment); }
  Block aligned_allocate(std::size_t n, std::size_t a) const noexcept {
    // The C heap needs up to n + a bytes of address space to align n bytes to a: beyond PTRDIFF_MAX no request can
    // succeed (and some heaps, ASan's among them, do not fail cleanly there).
    std::size_t span = 0;
    if (n == 0 || !is_power_of_two(a) || !add_checked(n, a, span) || span > PTRDIFF_MAX) return {};
    void* p = nullptr;
    if (::posix_memalign(&p, a < sizeof(void*) ? sizeof(void*) : a, n) != 0) return {};
    return {p, n};
  }
  // posix_memalign's memory is the C heap's: free and realloc take it, so these are Mallocator's.
  bool deallocate(Block b) const noexcept { return Mallocator::instance.deallocate(b); }
  bool reallocate(Block& b, std::size_t n) const noexcept { return Mallocator::instance.reallocate(b, n); }
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) const noexcept {
    if (!is_power_of_two(a)) return false;
    auto aligned_alloc = [this, a](std::size_t m) noexcept { return aligned_allocate(m, a); };
    if (bool r; detail::reallocate_ends(*this, b, n, r, aligned_alloc)) return r;
    if (b.size == n && is_aligned(b.ptr, a)) return true;
    return detail::move_block(*this, b, aligned_alloc(n));
  }
};
inline const AlignedMallocator AlignedMallocator::instance{};

}  // namespace alloy
