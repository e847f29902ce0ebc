#pragma once
/// \file alloy/no_access_allocator.hpp
#include <sys/mman.h>

#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>

#include <alloy/common.hpp>

namespace alloy {

/// NoAccessAllocator
///
/// Semantics: stands in for device memory on a machine without a GPU. It hands out pages mapped `PROT_NONE`, so any
/// host read or write of its memory crashes the process (SIGSEGV). A stack built over it and run through a long test
/// proves that its bookkeeping never touches the memory it manages, as a stack over `CudaMallocator` must not.
/// The only way in or out is `copy`, which opens the pages it needs for the length of one `memmove`, like a
/// `cudaMemcpy` would.
/// Capabilities: allocate, aligned_allocate, deallocate, owns (every mapping is recorded), copy, good_alloc_size
/// (whole pages). Static queries for tests: `live_blocks()`, `live_bytes()`. No expand or reallocate, like
/// `cudaMalloc`: stacks over it exercise the generic fallbacks, which move bytes through `copy`.
/// Memory space: `device`. Alignment: 4096.
/// Thread safety: thread-safe (one mutex over the record of mappings; this is a test allocator, not a fast one).
/// Failure: an empty Block for n == 0, when rounding to pages overflows, or when the kernel refuses; `copy` returns
/// false for a range that starts in one of its mappings and runs past the mapping's end.
/// Example:
/// ```cpp
/// alloy::NoAccessAllocator dev;
/// alloy::Block b = dev.allocate(100);
/// const char msg[] = "hello";
/// CHECK(dev.copy(b.ptr, msg, sizeof msg, {}));       // host -> "device"
/// char back[sizeof msg] = {};
/// CHECK(dev.copy(back, b.ptr, sizeof msg, {}));      // "device" -> host
/// CHECK(std::strcmp(back, "hello") == 0);
/// CHECK(dev.owns(b) == alloy::Ternary::yes);
/// CHECK(dev.deallocate(b));
/// ```
struct NoAccessAllocator {
  static constexpr std::size_t alignment = 4096;
  static constexpr MemorySpace memory_space = MemorySpace::device;
  static const NoAccessAllocator instance;

  /// n rounded up to whole pages; 0 only when that rounding overflows (docs/primitives.md). Above PTRDIFF_MAX the
  /// hint is still the rounding; allocate refuses such lengths itself.
  std::size_t good_alloc_size(std::size_t n) const noexcept {
    std::size_t r = 0;
    return round_up_checked(n, alignment, r) ? r : 0;
  }
  Block allocate(std::size_t n) const noexcept { return aligned_allocate(n, alignment); }
  Block aligned_allocate(std::size_t n, std::size_t a) const noexcept {
    if (!is_power_of_two(a)) return {};
    if (a < alignment) a = alignment;
    const std::size_t len = round_up_object_size(n, alignment);  // 0: overflow, or more than PTRDIFF_MAX bytes
    std::size_t map_len = 0;
    if (len == 0 || !add_checked(len, a - alignment, map_len) || map_len > PTRDIFF_MAX) return {};
    void* p = ::mmap(nullptr, map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return {};
    const std::uintptr_t base = address_of(p), start = align_up(base, a);
    if (start > base) ::munmap(p, start - base);
    if (const std::uintptr_t tail = base + map_len - (start + len); tail > 0) ::munmap(to_pointer(start + len), tail);
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    r.maps.emplace(start, len);
    r.bytes += n;
    return {to_pointer(start), n};
  }
  bool deallocate(Block b) const noexcept {
    if (!b) return true;
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.maps.find(address_of(b.ptr));
    ALLOY_ASSERT(it != r.maps.end() && it->second == good_alloc_size(b.size),
                 "NoAccessAllocator::deallocate: foreign block, double free or wrong size");
    if (it == r.maps.end() || it->second != good_alloc_size(b.size)) return false;
    ::munmap(b.ptr, it->second);
    r.maps.erase(it);
    r.bytes -= b.size;
    return true;
  }
  Ternary owns(Block b) const noexcept {
    if (!b) return Ternary::no;
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    return to_ternary(find_mapping(r, b.ptr, b.size) != r.maps.end());
  }
  /// Copies n bytes between any two of: host memory, memory of this allocator. The pages of this allocator that the
  /// copy touches are readable/writable only for the duration of the copy. Returns false, copying nothing, when a
  /// range starts inside one of this allocator's mappings and runs past its end (no valid block does; the memmove
  /// would fault on the next mapping or on unmapped memory); never fails for valid ranges.
  bool copy(void* dst, const void* src, std::size_t n, stream_view) const noexcept {
    if (n == 0) return true;
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    const auto end = r.maps.end();
    const auto d = mapping_at(r, dst), s = mapping_at(r, src);
    if (!fits(d, end, dst, n) || !fits(s, end, src, n)) return false;
    if (d != end) ::mprotect(to_pointer(d->first), d->second, PROT_READ | PROT_WRITE);
    if (s != end && s != d) ::mprotect(to_pointer(s->first), s->second, PROT_READ);
    std::memmove(dst, src, n);
    if (d != end) ::mprotect(to_pointer(d->first), d->second, PROT_NONE);
    if (s != end && s != d) ::mprotect(to_pointer(s->first), s->second, PROT_NONE);
    return true;
  }

  /// Blocks currently allocated, over all NoAccessAllocator objects.
  static std::size_t live_blocks() noexcept {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    return r.maps.size();
  }
  /// Bytes currently allocated (as requested), over all NoAccessAllocator objects.
  static std::size_t live_bytes() noexcept {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    return r.bytes;
  }

 private:
  struct Registry {
    std::mutex mutex;
    std::map<std::uintptr_t, std::size_t> maps;  // start -> mapped length
    std::size_t bytes = 0;
  };
  static Registry& registry() noexcept {
    static Registry r;
    return r;
  }
  using MapIt = std::map<std::uintptr_t, std::size_t>::const_iterator;
  // The mapping that contains the byte at p, or end().
  static MapIt mapping_at(const Registry& r, const void* p) noexcept {
    const std::uintptr_t a = address_of(p);
    auto it = r.maps.upper_bound(a);
    if (it == r.maps.begin()) return r.maps.end();
    --it;
    return a - it->first < it->second ? it : r.maps.end();
  }
  // Whether [p, p + n) stays inside mapping m (true when m is end(): host memory, the caller's to vouch for).
  static bool fits(MapIt m, MapIt end, const void* p, std::size_t n) noexcept {
    return m == end || n <= m->second - (address_of(p) - m->first);
  }
  // The mapping that contains [p, p + n), or end().
  static MapIt find_mapping(const Registry& r, const void* p, std::size_t n) noexcept {
    const auto m = mapping_at(r, p);
    return fits(m, r.maps.end(), p, n) ? m : r.maps.end();  // end() fits, and stays end()
  }
};
inline const NoAccessAllocator NoAccessAllocator::instance{};

}  // namespace alloy
