#pragma once
// Small allocators for testing the generic machinery (common.hpp fallbacks, make.hpp, the kit itself):
//   CheckedHeap<Alignment, Caps>: a heap that records every live block with its exact size. A deallocate of a
//     foreign block, of a freed block or with the wrong size is a test failure (and returns false), so a helper that
//     gives back the wrong Block is caught. It counts live blocks and bytes, can be told to fail allocations
//     (`fail_after(k)`: the next k succeed, the rest fail), and declares only allocate and deallocate, plus
//     `expand` (in place within a reserved capacity) with caps::expand and `aligned_allocate` with caps::aligned.
//     No reallocate, no owns: alloy::reallocate / aligned_reallocate must use their fallbacks over it.
//   BumpArena<Size>: allocate only (no deallocate, no expand): the allocator that D's fallbacks must cope with.
//   EveryPrimitive<Alignment, Space>: declares every primitive of DESIGN.md (stream-ordered and copy included) and
//     does nothing: for the compile-time capability checks (concepts, Ref).
#include <alloy/common.hpp>

#include <cstdint>
#include <cstdlib>
#include <map>

#include <doctest/doctest.h>

namespace alloy::test {

namespace caps {
inline constexpr unsigned none = 0, expand = 1, aligned = 2;
}

template <std::size_t Alignment = platform_alignment, unsigned Caps = caps::none>
class CheckedHeap {
 public:
  static constexpr std::size_t alignment = Alignment;
  static constexpr std::size_t granule = 256;  // with caps::expand a block may grow in place up to this multiple
  static constexpr std::size_t max_request = std::size_t{1} << 40;  // larger requests fail (and never reach ASan)

  CheckedHeap() = default;
  CheckedHeap(const CheckedHeap&) = delete;
  CheckedHeap& operator=(const CheckedHeap&) = delete;
  ~CheckedHeap() {
    for (auto& [p, rec] : live_) std::free(to_pointer(p));
  }

  Block allocate(std::size_t n) noexcept { return allocate_aligned(n, Alignment); }
  Block aligned_allocate(std::size_t n, std::size_t a) noexcept
    requires((Caps & caps::aligned) != 0)
  {
    if (!is_power_of_two(a)) return {};
    return allocate_aligned(n, a < Alignment ? Alignment : a);
  }
  bool expand(Block& b, std::size_t delta) noexcept
    requires((Caps & caps::expand) != 0)
  {
    if (delta == 0) return true;
    if (!b) return false;
    auto it = live_.find(address_of(b.ptr));
    if (it == live_.end() || it->second.size != b.size) {
      FAIL_CHECK("CheckedHeap::expand: foreign block or wrong size");
      return false;
    }
    std::size_t n = 0;
    if (!add_checked(b.size, delta, n) || n > it->second.capacity) return false;
    it->second.size = n;
    bytes_ += delta;
    b.size = n;
    ++expansions_;
    return true;
  }
  bool deallocate(Block b) noexcept {
    if (!b) return true;
    auto it = live_.find(address_of(b.ptr));
    if (it == live_.end()) {
      FAIL_CHECK("CheckedHeap::deallocate: foreign block or double free");
      return false;
    }
    if (it->second.size != b.size) {
      FAIL_CHECK("CheckedHeap::deallocate: wrong size " << b.size << ", the block has " << it->second.size);
      return false;
    }
    bytes_ -= b.size;
    live_.erase(it);
    std::free(b.ptr);
    return true;
  }

  std::size_t live_blocks() const noexcept { return live_.size(); }
  std::size_t live_bytes() const noexcept { return bytes_; }
  std::size_t allocations() const noexcept { return allocations_; }
  std::size_t expansions() const noexcept { return expansions_; }
  /// The next k allocations succeed (memory permitting), every one after fails; fail_after(SIZE_MAX) undoes it.
  void fail_after(std::size_t k) noexcept { budget_ = k; }
  /// Whether b is a live block of exactly this size.
  bool is_live(Block b) const noexcept {
    auto it = live_.find(address_of(b.ptr));
    return it != live_.end() && it->second.size == b.size;
  }

 private:
  struct Record {
    std::size_t size, capacity;
  };
  Block allocate_aligned(std::size_t n, std::size_t a) noexcept {
    if (n == 0 || budget_ == 0) return {};
    std::size_t cap = n;
    if constexpr ((Caps & caps::expand) != 0)
      if (!round_up_checked(n, granule, cap)) return {};
    if (cap > max_request) return {};
    void* p = nullptr;
    if (::posix_memalign(&p, a < sizeof(void*) ? sizeof(void*) : a, cap) != 0) return {};
    if (budget_ != SIZE_MAX) --budget_;
    live_.emplace(address_of(p), Record{n, cap});
    bytes_ += n;
    ++allocations_;
    return {p, n};
  }
  std::map<std::uintptr_t, Record> live_;
  std::size_t bytes_ = 0, allocations_ = 0, expansions_ = 0, budget_ = SIZE_MAX;
};

template <std::size_t Size>
class BumpArena {
 public:
  static constexpr std::size_t alignment = 16;
  Block allocate(std::size_t n) noexcept {
    std::size_t r = 0;
    if (n == 0 || !round_up_checked(n, alignment, r) || r > Size - used_) return {};
    Block b{buf_ + used_, n};
    used_ += r;
    return b;
  }
  std::size_t used() const noexcept { return used_; }

 private:
  alignas(16) unsigned char buf_[Size];
  std::size_t used_ = 0;
};

template <std::size_t Alignment, MemorySpace Space>
struct EveryPrimitive {
  static constexpr std::size_t alignment = Alignment;
  static constexpr MemorySpace memory_space = Space;
  Block allocate(std::size_t) noexcept { return {}; }
  Block aligned_allocate(std::size_t, std::size_t) noexcept { return {}; }
  Block allocate_all() noexcept { return {}; }
  Block allocate_fresh(std::size_t) noexcept { return {}; }
  bool expand(Block&, std::size_t) noexcept { return false; }
  bool reallocate(Block&, std::size_t) noexcept { return false; }
  bool aligned_reallocate(Block&, std::size_t, std::size_t) noexcept { return false; }
  Ternary owns(Block) noexcept { return Ternary::no; }
  Ternary resolve_internal_pointer(const void*, Block&) noexcept { return Ternary::no; }
  bool deallocate(Block) noexcept { return true; }
  bool deallocate_all() noexcept { return true; }
  Ternary empty() noexcept { return Ternary::yes; }
  std::size_t good_alloc_size(std::size_t n) noexcept { return n; }
  Block allocate(stream_view, std::size_t) noexcept { return {}; }
  bool deallocate(stream_view, Block) noexcept { return true; }
  bool copy(void*, const void*, std::size_t, stream_view) noexcept { return true; }
};

}  // namespace alloy::test
