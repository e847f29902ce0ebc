#pragma once
/// \file alloy/mmap_allocator.hpp
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include <alloy/common.hpp>

namespace alloy {

/// MmapAllocator
///
/// Semantics: anonymous private pages from the kernel (`mmap`, `munmap`): page granular, zero-filled. Use it as the
/// parent of large arenas (Region, BitmappedBlock) so they return their memory to the OS when destroyed.
/// Capabilities: allocate, aligned_allocate (any power of two: over-map, then unmap the slack), deallocate,
/// good_alloc_size (a whole number of pages); on Linux also expand (`mremap` in place, fails when the next pages are
/// taken) and reallocate (`mremap`, may move, keeps page alignment only). No owns (the kernel's map is not asked).
/// Alignment: 4096 (the page size on the platforms alloy supports; checked against `sysconf` in the tests).
/// Thread safety: thread-safe. Stateless: `MmapAllocator::instance`.
/// Failure: an empty Block when the kernel refuses, for n == 0, and when rounding n up to pages overflows.
/// Example:
/// ```cpp
/// alloy::MmapAllocator m;
/// alloy::Block b = m.allocate(10000);
/// CHECK(b.size == 10000);
/// CHECK(m.good_alloc_size(10000) == 12288);
/// CHECK(static_cast<unsigned char*>(b.ptr)[9999] == 0);  // fresh pages are zero
/// CHECK(m.deallocate(b));
/// alloy::Block h = m.aligned_allocate(100, 1 << 21);      // a 2 MiB aligned page run
/// CHECK(alloy::is_aligned(h.ptr, 1 << 21));
/// CHECK(m.deallocate(h));
/// ```
struct MmapAllocator {
  static constexpr std::size_t alignment = 4096;
  static const MmapAllocator instance;

  /// n rounded up to whole pages; 0 only when that rounding overflows (docs/primitives.md). Above PTRDIFF_MAX the
  /// hint is still the rounding; allocate, expand and reallocate refuse such lengths themselves (`map_length`).
  std::size_t good_alloc_size(std::size_t n) const noexcept {
    std::size_t r = 0;
    return round_up_checked(n, alignment, r) ? r : 0;
  }
  Block allocate(std::size_t n) const noexcept {
    const std::size_t len = map_length(n);
    if (len == 0) return {};
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? Block{} : Block{p, n};
  }
  /// Pages aligned to `a` (a power of two; below a page it is a page): maps `a - 4096` extra bytes and unmaps the
  /// slack on both sides, so the block is an ordinary mapping that deallocate, expand and reallocate handle.
  Block aligned_allocate(std::size_t n, std::size_t a) const noexcept {
    if (!is_power_of_two(a)) return {};
    if (a <= alignment) return allocate(n);
    const std::size_t len = map_length(n);
    std::size_t map_len = 0;
    if (len == 0 || !add_checked(len, a - alignment, map_len) || map_len > PTRDIFF_MAX) return {};
    void* p = ::mmap(nullptr, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return {};
    const std::uintptr_t base = address_of(p), start = align_up(base, a);
    if (start > base) ::munmap(p, start - base);
    if (const std::uintptr_t tail = base + map_len - (start + len); tail > 0) ::munmap(to_pointer(start + len), tail);
    return {to_pointer(start), n};
  }
  bool deallocate(Block b) const noexcept {
    if (!b) return true;
    return ::munmap(b.ptr, good_alloc_size(b.size)) == 0;
  }
#ifdef __linux__
  bool expand(Block& b, std::size_t delta) const noexcept {
    if (delta == 0) return true;
    if (!b) return false;
    std::size_t n = 0;
    if (!add_checked(b.size, delta, n)) return false;
    const std::size_t old_len = good_alloc_size(b.size), new_len = map_length(n);
    if (new_len == 0) return false;
    if (new_len != old_len && ::mremap(b.ptr, old_len, new_len, 0) == MAP_FAILED) return false;
    b.size = n;
    return true;
  }
  bool reallocate(Block& b, std::size_t n) const noexcept {
    if (bool r; detail::reallocate_ends(*this, b, n, r)) return r;
    const std::size_t old_len = good_alloc_size(b.size), new_len = map_length(n);
    if (new_len == 0) return false;
    void* p = b.ptr;
    if (new_len != old_len) {
      p = ::mremap(b.ptr, old_len, new_len, MREMAP_MAYMOVE);
      if (p == MAP_FAILED) return false;
    }
    b = {p, n};
    return true;
  }
#endif

 private:
  /// The length to map for n bytes: whole pages, or 0 where no mapping can serve n (the rounding overflows, or the
  /// pages exceed PTRDIFF_MAX bytes, a size no object can have).
  static std::size_t map_length(std::size_t n) noexcept { return round_up_object_size(n, alignment); }
};
inline const MmapAllocator MmapAllocator::instance{};

}  // namespace alloy
