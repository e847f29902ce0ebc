#pragma once
/// \file alloy/region.hpp
/// Region, SharedRegion, InSituRegion: bump allocation from one contiguous chunk (D's building_blocks/region.d).
///
/// Regions never read or write the memory they hand out (their state is three pointers kept in the object), so they
/// work unchanged over device memory: `Region<CudaMallocator>` and `Region<NoAccessAllocator>` are fine.
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

#include <alloy/common.hpp>
#include <alloy/null_allocator.hpp>

namespace alloy {

namespace detail {

// Memory for a region that owns it: n rounded up to MinAlign, from the parent, aligned to MinAlign. Empty on failure
// (n == 0, overflow, parent refuses).
template <std::size_t MinAlign, class Parent>
Block region_acquire(Parent& parent, std::size_t n) noexcept {
  std::size_t r = 0;
  if (n == 0 || !round_up_checked(n, MinAlign, r)) return {};
  Block b{};
  if constexpr (Parent::alignment >= MinAlign) {
    b = parent.allocate(r);
  } else if constexpr (has_aligned_allocate<Parent>) {
    b = parent.aligned_allocate(r, MinAlign);
  } else {
    static_assert(has_aligned_allocate<Parent>,
                  "Region: MinAlign is larger than Parent::alignment and Parent has no aligned_allocate; use a parent "
                  "with aligned_allocate (e.g. alloy::AlignedMallocator) or a smaller MinAlign");
  }
  if (!b || b.size != r || !is_aligned(b.ptr, MinAlign)) {
    if (b) alloy::deallocate(parent, b);
    return {};
  }
  return b;
}

// The aligned interior [lo, hi) of a caller's span; both null when no aligned byte fits.
template <std::size_t MinAlign>
std::pair<std::byte*, std::byte*> region_interior(std::span<std::byte> s) noexcept {
  if (s.empty() || s.data() == nullptr) return {nullptr, nullptr};
  const std::uintptr_t b = address_of(s.data()), e = b + s.size();
  const std::uintptr_t lo = align_up(b, MinAlign);
  const std::uintptr_t hi = round_down(e, MinAlign);
  if (lo < b || lo >= hi) return {nullptr, nullptr};
  return {s.data() + (lo - b), s.data() + (hi - b)};
}

// n rounded up to MinAlign; 0 for n == 0 and when the rounding overflows (a request no region can serve).
template <std::size_t MinAlign>
constexpr std::size_t region_round(std::size_t n) noexcept {
  return (n + (MinAlign - 1)) & ~(MinAlign - 1);
}

struct RegionNotOwned {};

// The memory a region bumps through and who gives it back, shared by Region and SharedRegion (their bump loops stay
// apart: Region's is W4's hot path). A caller's span (borrowed: its aligned interior, never freed) or owned memory
// from Parent, given back by the destructor. Only a chunk whose Parent can own memory (not NullAllocator) keeps the
// ownership flag and is move-only; a borrowed one is a copyable pair of pointers.
template <class Parent, std::size_t MinAlign>
class RegionChunk {
 public:
  static constexpr bool can_own = !std::is_same_v<Parent, NullAllocator>;

  RegionChunk() noexcept requires std::default_initializable<Parent> = default;
  explicit RegionChunk(std::span<std::byte> store) noexcept requires std::default_initializable<Parent> {
    std::tie(begin_, end_) = region_interior<MinAlign>(store);
  }
  explicit RegionChunk(std::size_t n) noexcept requires can_own && std::default_initializable<Parent> { acquire(n); }
  RegionChunk(Parent parent, std::size_t n) noexcept requires can_own : parent_(std::move(parent)) { acquire(n); }

  RegionChunk(const RegionChunk&) requires(!can_own) = default;
  RegionChunk& operator=(const RegionChunk&) requires(!can_own) = default;
  RegionChunk(RegionChunk&& o) noexcept
      : parent_(std::move(o.parent_)),
        begin_(std::exchange(o.begin_, nullptr)),
        end_(std::exchange(o.end_, nullptr)),
        owned_(std::exchange(o.owned_, {})) {}
  RegionChunk& operator=(RegionChunk&& o) noexcept {
    if (this != &o) {
      release();
      parent_ = std::move(o.parent_);
      begin_ = std::exchange(o.begin_, nullptr);
      end_ = std::exchange(o.end_, nullptr);
      owned_ = std::exchange(o.owned_, {});
    }
    return *this;
  }
  ~RegionChunk() { release(); }  // (one destructor: clang 14 cannot choose between constrained ones)

  std::byte* begin() const noexcept { return begin_; }
  std::byte* end() const noexcept { return end_; }
  std::size_t capacity() const noexcept { return static_cast<std::size_t>(end_ - begin_); }
  bool holds(Block b) const noexcept { return block_within(b, begin_, capacity()); }
  /// D's owns: the block lies inside the chunk, allocated or not.
  Ternary owns(Block b) const noexcept { return to_ternary(b && holds(b)); }
  /// n rounded up to MinAlign, whether or not the region has room (D's goodAllocSize); 0 only when that overflows.
  static std::size_t good_alloc_size(std::size_t n) noexcept {
    std::size_t r = 0;
    return round_up_checked(n, MinAlign, r) ? r : 0;
  }
  Parent& parent() noexcept { return parent_; }
  const Parent& parent() const noexcept { return parent_; }

 private:
  void acquire(std::size_t n) noexcept {
    const Block b = region_acquire<MinAlign>(parent_, n);
    if (!b) return;
    begin_ = static_cast<std::byte*>(b.ptr);
    end_ = begin_ + b.size;
    if constexpr (can_own) owned_ = true;
  }
  void release() noexcept {
    if constexpr (can_own) {
      if (owned_) {
        if constexpr (has_deallocate<Parent>) parent_.deallocate(Block{begin_, capacity()});
        owned_ = false;
      }
      begin_ = end_ = nullptr;
    }
  }

  [[no_unique_address]] Parent parent_{};
  std::byte* begin_ = nullptr;
  std::byte* end_ = nullptr;
  [[no_unique_address]] std::conditional_t<can_own, bool, RegionNotOwned> owned_{};
};

}  // namespace detail

/// Region<Parent = NullAllocator, MinAlign = platform_alignment, Downwards = GrowDownwards::no>
///
/// Semantics: bump allocation from one contiguous chunk: a request of n bytes takes the next `good_alloc_size(n)`
/// (n rounded up to MinAlign) bytes and moves the current pointer by that much, upwards, or downwards from the end when
/// `GrowDownwards::yes`. Only the most recent allocation can be given back (`deallocate`) or grown (`expand`);
/// `deallocate_all` rewinds everything. The state is three pointers; the memory itself is never read or written.
/// The chunk is a caller's `std::span<std::byte>` (borrowed: its aligned interior is used and it is never freed), or
/// owned memory from Parent: `Region(n)` (default-constructible Parent) or `Region(parent, n)`, n rounded up to
/// MinAlign, given back to Parent by the destructor. A Region that can own memory (Parent is not NullAllocator) is
/// move-only; `Region<>` over a span is a plain copyable value (copies hand out the same memory: copy deliberately).
/// Capabilities: allocate, aligned_allocate (any power of two), allocate_all (the rest of the chunk), deallocate (the
/// last allocation only: false for any other block; `deallocate({})` is true), deallocate_all, owns (the block lies in
/// the chunk), empty, good_alloc_size, `available()`; expand (the last allocation only) iff growing upwards;
/// copy iff Parent has copy.
/// Alignment: MinAlign. Memory space: Parent's, over a span too (Region<> over a span: host; a span of device memory
/// needs a device Parent, whose copy then moves its bytes).
/// Parent: any allocator (device memory included). If MinAlign > Parent::alignment, Parent needs aligned_allocate.
/// Thread safety: none (see SharedRegion).
/// Failure: an empty Block for n == 0, for a request larger than `available()`, and when rounding overflows. A Region
/// whose parent refused the chunk is valid and empty: every allocation fails.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// alignas(16) std::byte buf[256];
/// alloy::Region<> r{std::span<std::byte>(buf)};
/// alloy::Block a = r.allocate(10), b = r.allocate(20);
/// CHECK(static_cast<std::byte*>(b.ptr) == buf + 16);   // 10 bytes take 16
/// CHECK(!r.deallocate(a));                            // only the last allocation can be given back
/// CHECK(r.deallocate(b));
/// CHECK(r.available() == 240);
/// alloy::Region<alloy::Mallocator> owned(1000);       // 1008 bytes from malloc, freed by the destructor
/// CHECK(owned.available() == 1008);
/// ```
template <class Parent = NullAllocator, std::size_t MinAlign = platform_alignment,
          GrowDownwards Downwards = GrowDownwards::no>
class Region {
  static_assert(allocator<Parent>,
                "Region: Parent must be an alloy allocator (a type with `static constexpr std::size_t alignment` and "
                "`Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator; NullAllocator, the default, for a "
                "caller's span)");
  static_assert(is_power_of_two(MinAlign), "Region: MinAlign must be a power of two");
  using Chunk = detail::RegionChunk<Parent, MinAlign>;
  static constexpr bool can_own = Chunk::can_own;
  static constexpr bool down = Downwards == GrowDownwards::yes;

 public:
  static constexpr std::size_t alignment = MinAlign;
  static constexpr MemorySpace memory_space = memory_space_of<Parent>();
  static constexpr bool grows_downwards = down;
  using parent_type = Parent;

  /// A region with no memory: every allocation fails.
  Region() noexcept requires std::default_initializable<Parent> = default;

  /// Over a caller's memory (borrowed, never freed): the part of `store` aligned to MinAlign.
  explicit Region(std::span<std::byte> store) noexcept requires std::default_initializable<Parent> : chunk_(store) {
    current_ = start();
  }

  /// Owns `n` bytes (rounded up to MinAlign) from a default-constructed Parent; empty if the parent refuses.
  explicit Region(std::size_t n) noexcept requires can_own && std::default_initializable<Parent> : chunk_(n) {
    current_ = start();
  }

  /// Owns `n` bytes (rounded up to MinAlign) from `parent`, which is stored; empty if the parent refuses.
  Region(Parent parent, std::size_t n) noexcept requires can_own : chunk_(std::move(parent), n) {
    current_ = start();
  }

  Region(const Region&) requires(!can_own) = default;
  Region& operator=(const Region&) requires(!can_own) = default;
  Region(Region&& o) noexcept : current_(std::exchange(o.current_, nullptr)), chunk_(std::move(o.chunk_)) {}
  Region& operator=(Region&& o) noexcept {
    if (this != &o) {
      chunk_ = std::move(o.chunk_);
      current_ = std::exchange(o.current_, nullptr);
    }
    return *this;
  }
  ~Region() = default;

  /// The fast path: one round-up, one compare, one add. n == 0 and sizes whose rounding overflows both round to 0;
  /// the `r == 0` test costs a branch on the flags of the rounding `and`, and vanishes where the compiler knows
  /// n > 0 (W4's loop then compiles to the hand-written bump pointer, instruction for instruction).
  Block allocate(std::size_t n) noexcept {
    const std::size_t r = detail::region_round<MinAlign>(n);
    if constexpr (down) {
      if (r == 0 || r > static_cast<std::size_t>(current_ - base())) return {};
      current_ -= r;
      return {current_, n};
    } else {
      if (r == 0 || r > static_cast<std::size_t>(limit() - current_)) return {};
      std::byte* const p = current_;
      current_ = p + r;
      return {p, n};
    }
  }

  /// n bytes aligned to `a` (a power of two; an empty Block otherwise). The padding skipped to reach the alignment
  /// is not reused until `deallocate_all`.
  Block aligned_allocate(std::size_t n, std::size_t a) noexcept {
    if (!is_power_of_two(a)) return {};
    if (a <= MinAlign) return allocate(n);
    const std::size_t r = detail::region_round<MinAlign>(n);
    if (r == 0) return {};
    const std::uintptr_t cur = address_of(current_);
    if constexpr (down) {
      if (r > static_cast<std::size_t>(current_ - base())) return {};
      const std::uintptr_t p = round_down(cur - r, a);
      if (p < address_of(base())) return {};
      current_ -= cur - p;
      return {current_, n};
    } else {
      const std::uintptr_t p = align_up(cur, a), e = address_of(limit());
      if (p < cur || p > e || r > e - p) return {};
      std::byte* const q = current_ + (p - cur);
      current_ = q + r;
      return {q, n};
    }
  }

  /// All the memory not yet allocated, in one block (empty if none is left).
  Block allocate_all() noexcept {
    const std::size_t left = available();
    if (left == 0) return {};
    if constexpr (down) {
      current_ = base();
      return {base(), left};
    } else {
      std::byte* const p = current_;
      current_ = limit();
      return {p, left};
    }
  }

  /// Grows the last allocation in place by `delta` bytes; false (and `b` unchanged) for any other block or when
  /// the region has no room. `delta == 0` is true.
  bool expand(Block& b, std::size_t delta) noexcept requires(!down) {
    if (delta == 0) return true;
    if (!b) return false;
    // Checked in release builds too, as deallocate does: a foreign block that happens to end at current_ (one from a
    // region over the memory just below) must not grow into this region.
    const bool mine = chunk_.holds(b);
    ALLOY_ASSERT(mine, "Region::expand: the block did not come from this region");
    if (!mine) return false;
    if (address_of(b.ptr) + detail::region_round<MinAlign>(b.size) != address_of(current_)) return false;
    std::size_t n = 0, rn = 0;
    if (!add_checked(b.size, delta, n) || !round_up_checked(n, MinAlign, rn)) return false;
    const std::size_t extra = rn - detail::region_round<MinAlign>(b.size);
    if (extra > available()) return false;
    current_ += extra;
    b.size = n;
    return true;
  }

  /// Gives back `b` if it is the last allocation (true); any other block stays allocated (false).
  bool deallocate(Block b) noexcept {
    if (!b) return true;
    const bool mine = chunk_.holds(b);
    ALLOY_ASSERT(mine, "Region::deallocate: the block did not come from this region");
    if (!mine) return false;
    const std::size_t r = detail::region_round<MinAlign>(b.size);
    if constexpr (down) {
      if (b.ptr != current_) return false;
      current_ += r;
    } else {
      if (address_of(b.ptr) + r != address_of(current_)) return false;
      current_ = static_cast<std::byte*>(b.ptr);
    }
    return true;
  }

  /// Rewinds the region: every block is given back at once.
  bool deallocate_all() noexcept {
    current_ = start();
    return true;
  }

  /// Whether `b` lies inside the region's memory (D's rule: allocated or not).
  Ternary owns(Block b) const noexcept { return chunk_.owns(b); }

  Ternary empty() const noexcept { return to_ternary(current_ == start()); }

  /// n rounded up to MinAlign, whether or not the region has room (D's goodAllocSize); 0 only when that overflows.
  std::size_t good_alloc_size(std::size_t n) const noexcept { return Chunk::good_alloc_size(n); }

  /// Bytes left for allocation.
  std::size_t available() const noexcept {
    if constexpr (down)
      return static_cast<std::size_t>(current_ - base());
    else
      return static_cast<std::size_t>(limit() - current_);
  }
  /// Bytes of the whole region (allocated or not).
  std::size_t capacity() const noexcept { return chunk_.capacity(); }
  /// The first byte of the region's memory (null for a region without memory).
  void* data() const noexcept { return chunk_.begin(); }

  /// Parent's copy (device memory is copied by its allocator).
  bool copy(void* dst, const void* src, std::size_t n, stream_view s) noexcept requires has_copy<Parent> {
    return chunk_.parent().copy(dst, src, n, s);
  }

  Parent& parent() noexcept { return chunk_.parent(); }
  const Parent& parent() const noexcept { return chunk_.parent(); }

 private:
  std::byte* start() const noexcept { return down ? chunk_.end() : chunk_.begin(); }
  std::byte* base() const noexcept { return chunk_.begin(); }
  std::byte* limit() const noexcept { return chunk_.end(); }

  std::byte* current_ = nullptr;  // first: the bump pointer at offset 0, as in a hand-written one (W4)
  Chunk chunk_;
};

/// SharedRegion<Parent = NullAllocator, MinAlign = platform_alignment, Downwards = GrowDownwards::no>
///
/// Semantics: Region for many threads: the current pointer is a `std::atomic` moved by compare-and-swap, so
/// allocation is lock-free. Threads racing for the same region get disjoint, adjacent blocks. Constructed like Region
/// (a caller's span, borrowed; or owned memory from Parent, freed by the destructor); not copyable, not movable.
/// Capabilities: allocate, aligned_allocate, deallocate (the last allocation only: one compare-and-swap, false if
/// another block was allocated since), deallocate_all, owns, empty, good_alloc_size, `available()`; copy iff Parent
/// has copy. No expand and no allocate_all (D's set).
/// Alignment: MinAlign. Memory space: Parent's.
/// Thread safety: every primitive may be called concurrently. `deallocate_all` concurrent with allocations is
/// atomic but rewinds them too: call it when no thread holds blocks.
/// Failure: as Region.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// #include <thread>
/// alloy::SharedRegion<alloy::Mallocator> r(1024);
/// alloy::Block a{}, b{};
/// std::thread t1([&] { a = r.allocate(64); }), t2([&] { b = r.allocate(64); });
/// t1.join();
/// t2.join();
/// CHECK(a);
/// CHECK(b);
/// CHECK((a.end_address() == alloy::address_of(b.ptr) || b.end_address() == alloy::address_of(a.ptr)));
/// ```
template <class Parent = NullAllocator, std::size_t MinAlign = platform_alignment,
          GrowDownwards Downwards = GrowDownwards::no>
class SharedRegion {
  static_assert(allocator<Parent>,
                "SharedRegion: Parent must be an alloy allocator (a type with `static constexpr std::size_t alignment` "
                "and `Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator; NullAllocator, the default, for a "
                "caller's span)");
  static_assert(is_power_of_two(MinAlign), "SharedRegion: MinAlign must be a power of two");
  using Chunk = detail::RegionChunk<Parent, MinAlign>;
  static constexpr bool can_own = Chunk::can_own;
  static constexpr bool down = Downwards == GrowDownwards::yes;

 public:
  static constexpr std::size_t alignment = MinAlign;
  static constexpr MemorySpace memory_space = memory_space_of<Parent>();
  static constexpr bool grows_downwards = down;
  using parent_type = Parent;

  SharedRegion() noexcept requires std::default_initializable<Parent> = default;
  explicit SharedRegion(std::span<std::byte> store) noexcept requires std::default_initializable<Parent>
      : chunk_(store), current_(start()) {}
  explicit SharedRegion(std::size_t n) noexcept requires can_own && std::default_initializable<Parent>
      : chunk_(n), current_(start()) {}
  SharedRegion(Parent parent, std::size_t n) noexcept requires can_own
      : chunk_(std::move(parent), n), current_(start()) {}
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  Block allocate(std::size_t n) noexcept {
    const std::size_t r = detail::region_round<MinAlign>(n);
    if (r == 0) return {};
    std::byte* cur = current_.load(std::memory_order_relaxed);
    std::byte* next = nullptr;
    do {
      if constexpr (down) {
        if (r > static_cast<std::size_t>(cur - base())) return {};
        next = cur - r;
      } else {
        if (r > static_cast<std::size_t>(limit() - cur)) return {};
        next = cur + r;
      }
    } while (!current_.compare_exchange_weak(cur, next, std::memory_order_acq_rel, std::memory_order_relaxed));
    return {down ? next : cur, n};
  }

  Block aligned_allocate(std::size_t n, std::size_t a) noexcept {
    if (!is_power_of_two(a)) return {};
    if (a <= MinAlign) return allocate(n);
    const std::size_t r = detail::region_round<MinAlign>(n);
    if (r == 0) return {};
    std::byte* cur = current_.load(std::memory_order_relaxed);
    std::byte* next = nullptr;
    std::byte* result = nullptr;
    do {
      const std::uintptr_t c = address_of(cur);
      if constexpr (down) {
        if (r > static_cast<std::size_t>(cur - base())) return {};
        const std::uintptr_t p = round_down(c - r, a);
        if (p < address_of(base())) return {};
        next = result = cur - (c - p);
      } else {
        const std::uintptr_t p = align_up(c, a), e = address_of(limit());
        if (p < c || p > e || r > e - p) return {};
        result = cur + (p - c);
        next = result + r;
      }
    } while (!current_.compare_exchange_weak(cur, next, std::memory_order_acq_rel, std::memory_order_relaxed));
    return {result, n};
  }

  bool deallocate(Block b) noexcept {
    if (!b) return true;
    const bool mine = chunk_.holds(b);
    ALLOY_ASSERT(mine, "SharedRegion::deallocate: the block did not come from this region");
    if (!mine) return false;
    const std::size_t r = detail::region_round<MinAlign>(b.size);
    std::byte* const p = static_cast<std::byte*>(b.ptr);
    // A block whose rounded size runs past the end was never handed out whole (and p + r would point past the
    // buffer): not the last allocation.
    if (r > static_cast<std::size_t>(limit() - p)) return false;
    std::byte* expected = down ? p : p + r;
    std::byte* const next = down ? p + r : p;
    return current_.compare_exchange_strong(expected, next, std::memory_order_acq_rel, std::memory_order_relaxed);
  }

  bool deallocate_all() noexcept {
    current_.store(start(), std::memory_order_release);
    return true;
  }

  Ternary owns(Block b) const noexcept { return chunk_.owns(b); }
  Ternary empty() const noexcept { return to_ternary(current_.load(std::memory_order_acquire) == start()); }
  /// As Region's: n rounded up to MinAlign, whether or not the region has room; 0 only when that overflows.
  std::size_t good_alloc_size(std::size_t n) const noexcept { return Chunk::good_alloc_size(n); }
  /// Bytes left for allocation (a snapshot).
  std::size_t available() const noexcept {
    std::byte* const cur = current_.load(std::memory_order_acquire);
    return static_cast<std::size_t>(down ? cur - base() : limit() - cur);
  }
  std::size_t capacity() const noexcept { return chunk_.capacity(); }
  void* data() const noexcept { return chunk_.begin(); }

  bool copy(void* dst, const void* src, std::size_t n, stream_view s) noexcept requires has_copy<Parent> {
    return chunk_.parent().copy(dst, src, n, s);
  }
  Parent& parent() noexcept { return chunk_.parent(); }
  const Parent& parent() const noexcept { return chunk_.parent(); }

 private:
  std::byte* start() const noexcept { return down ? chunk_.end() : chunk_.begin(); }
  std::byte* base() const noexcept { return chunk_.begin(); }
  std::byte* limit() const noexcept { return chunk_.end(); }

  Chunk chunk_;
  std::atomic<std::byte*> current_{nullptr};
};

/// InSituRegion<Size, MinAlign = platform_alignment>
///
/// Semantics: a Region whose memory is inside the object: `Size` bytes aligned to MinAlign, on the stack or in static
/// storage. Default-constructible; not copyable or movable (the region points into the object). As in D, it grows
/// downwards (from the end of its storage, the hot end of a downward-growing stack), so all `Size` bytes are usable
/// when Size is a multiple of MinAlign (else Size rounded down to MinAlign).
/// Capabilities: allocate, aligned_allocate, allocate_all, deallocate (the last allocation only), deallocate_all,
/// owns, empty, good_alloc_size, `available()`. No expand (it grows downwards, as D's on x86).
/// Alignment: MinAlign. Memory space: host. Thread safety: none.
/// Failure: an empty Block for n == 0 or more than `available()` bytes.
/// Example:
/// ```cpp
/// alloy::InSituRegion<4096, 1> r;
/// alloy::Block a = r.allocate(2001);
/// CHECK(a.size == 2001);
/// CHECK(r.available() == 2095);
/// CHECK(r.owns(a) == alloy::Ternary::yes);
/// CHECK(r.deallocate(a));
/// CHECK(r.empty() == alloy::Ternary::yes);
/// ```
template <std::size_t Size, std::size_t MinAlign = platform_alignment>
class InSituRegion {
  static_assert(is_power_of_two(MinAlign), "InSituRegion: MinAlign must be a power of two");
  static_assert(Size >= MinAlign, "InSituRegion: Size must be at least MinAlign");
  using Impl = Region<NullAllocator, MinAlign, GrowDownwards::yes>;

 public:
  static constexpr std::size_t alignment = MinAlign;
  static constexpr std::size_t size = Size;
  static constexpr bool grows_downwards = true;

  InSituRegion() noexcept : impl_(std::span<std::byte>(store_)) {}
  InSituRegion(const InSituRegion&) = delete;
  InSituRegion& operator=(const InSituRegion&) = delete;

  Block allocate(std::size_t n) noexcept { return impl_.allocate(n); }
  Block aligned_allocate(std::size_t n, std::size_t a) noexcept { return impl_.aligned_allocate(n, a); }
  Block allocate_all() noexcept { return impl_.allocate_all(); }
  bool deallocate(Block b) noexcept { return impl_.deallocate(b); }
  bool deallocate_all() noexcept { return impl_.deallocate_all(); }
  Ternary owns(Block b) const noexcept { return impl_.owns(b); }
  Ternary empty() const noexcept { return impl_.empty(); }
  std::size_t good_alloc_size(std::size_t n) const noexcept { return impl_.good_alloc_size(n); }
  std::size_t available() const noexcept { return impl_.available(); }
  std::size_t capacity() const noexcept { return impl_.capacity(); }

 private:
  alignas(MinAlign) std::byte store_[Size];
  Impl impl_;
};

}  // namespace alloy
