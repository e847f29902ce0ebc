#pragma once
/// \file alloy/mmap_allocator.hpp
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>

#include <alloy/common.hpp>

namespace alloy {

/// MmapAllocator
///
/// Semantics: anonymous private pages from the kernel (`mmap`, `munmap`): page granular, zero-filled. Use it as the
/// parent of large arenas (Region, BitmappedBlock) so they return their memory to the OS when destroyed.
/// Capabilities: allocate, deallocate, good_alloc_size (a whole number of pages); on Linux also expand (`mremap` in
/// place) and reallocate (`mremap`, may move).
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
/// ```
struct MmapAllocator {
  static constexpr std::size_t alignment = 4096;
  static const MmapAllocator instance;

  std::size_t good_alloc_size(std::size_t n) const noexcept {
    std::size_t r = 0;
    return round_up_checked(n, alignment, r) ? r : 0;
  }
  Block allocate(std::size_t n) const noexcept {
    const std::size_t len = good_alloc_size(n);
    if (len == 0 || len > PTRDIFF_MAX) return {};
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? Block{} : Block{p, n};
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
    const std::size_t old_len = good_alloc_size(b.size), new_len = good_alloc_size(n);
    if (new_len == 0 || new_len > PTRDIFF_MAX) return false;
    if (new_len != old_len && ::mremap(b.ptr, old_len, new_len, 0) == MAP_FAILED) return false;
    b.size = n;
    return true;
  }
  bool reallocate(Block& b, std::size_t n) const noexcept {
    if (!b) {
      if (n == 0) return true;
      Block nb = allocate(n);
      if (!nb) return false;
      b = nb;
      return true;
    }
    if (n == 0) {
      if (!deallocate(b)) return false;
      b = {};
      return true;
    }
    const std::size_t old_len = good_alloc_size(b.size), new_len = good_alloc_size(n);
    if (new_len == 0 || new_len > PTRDIFF_MAX) return false;
    void* p = b.ptr;
    if (new_len != old_len) {
      p = ::mremap(b.ptr, old_len, new_len, MREMAP_MAYMOVE);
      if (p == MAP_FAILED) return false;
    }
    b = {p, n};
    return true;
  }
#endif
};
inline const MmapAllocator MmapAllocator::instance{};

}  // namespace alloy
