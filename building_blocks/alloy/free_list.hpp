#pragma once
/// \file alloy/free_list.hpp
/// FreeList, ContiguousFreeList, SharedFreeList: lists of freed blocks threaded through the blocks themselves (D's
/// building_blocks/free_list.d, which holds the three; ContiguousFreeList is built from FreeList's parts there and
/// here, so they are one family).
///
/// Every list writes a pointer into each free block, so the memory must be host-accessible: over device memory
/// (`CudaMallocator`, `NoAccessAllocator`) none of them compiles, and the message names BitmappedBlock, whose
/// bookkeeping stays on the host.
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>

#include <alloy/common.hpp>
#include <alloy/null_allocator.hpp>

#if defined(__SANITIZE_THREAD__)
#define ALLOY_DETAIL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ALLOY_DETAIL_TSAN 1
#endif
#endif
#if defined(ALLOY_DETAIL_TSAN)
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
#endif

namespace alloy {

/// Whether a FreeList adapts its length to the hit rate (D's `Flag!"adaptive"`).
enum class Adaptive : bool { no = false, yes = true };

namespace detail {

// The size bounds of a free list: MinSize and MaxSize as given, or read from the constructor where they are
// choose_at_runtime. `unchecked` is D's FreeList!(P, 0, unbounded): every request uses the list, sizes unchecked.
template <std::size_t MinSize, std::size_t MaxSize>
class FreeListBounds {
 public:
  static constexpr bool min_runtime = MinSize == choose_at_runtime;
  static constexpr bool max_runtime = MaxSize == choose_at_runtime;
  static constexpr std::size_t runtime_count = std::size_t{min_runtime} + std::size_t{max_runtime};
  static constexpr bool unchecked = MinSize == 0 && MaxSize == unbounded;

  constexpr FreeListBounds() noexcept = default;
  // The runtime values in parameter order (min first); invalid bounds (max below a pointer, min above max) are a
  // broken precondition: asserted, and in release builds no size is eligible (the list forwards everything).
  template <class... N>
  explicit FreeListBounds(N... v) noexcept {
    const std::size_t vals[] = {static_cast<std::size_t>(v)..., 0};
    std::size_t i = 0;
    if constexpr (min_runtime) min_ = vals[i++];
    if constexpr (max_runtime) max_ = vals[i++];
    const bool ok = max() >= sizeof(void*) && max() != choose_at_runtime && min() <= max();
    ALLOY_ASSERT(ok, "FreeList: the bounds given at run time need min <= max and max >= sizeof(void*)");
    if (!ok) {
      if constexpr (min_runtime) min_ = 1;
      if constexpr (max_runtime) max_ = 0;
    }
  }

  constexpr std::size_t min() const noexcept {
    if constexpr (min_runtime) return min_;
    else return MinSize;
  }
  constexpr std::size_t max() const noexcept {
    if constexpr (max_runtime) return max_;
    else return MaxSize;
  }
  // Whether a request (or a block) of n bytes goes to the list. n == 0 never does.
  constexpr bool eligible(std::size_t n) const noexcept {
    if constexpr (unchecked) return n != 0;
    else if constexpr (MinSize == MaxSize && !max_runtime) return n == MaxSize;
    else if constexpr (MinSize == 0) return n != 0 && n <= max();
    else if constexpr (MaxSize == unbounded) return n >= min();
    else return n >= min() && n <= max();
  }
  // The bytes a list block has: max, or n in unchecked mode (where the parent is asked for exactly n).
  constexpr std::size_t block_size(std::size_t n) const noexcept {
    if constexpr (unchecked) return n;
    else return max();
  }

 private:
  struct None {};
  [[no_unique_address]] std::conditional_t<min_runtime, std::size_t, None> min_{};
  [[no_unique_address]] std::conditional_t<max_runtime, std::size_t, None> max_{};
};

template <class Parent, std::size_t MinSize, std::size_t MaxSize>
consteval bool free_list_checks() {
  static_assert(host_accessible<Parent>,
                "FreeList/SharedFreeList/ContiguousFreeList write their list into the free blocks, so Parent must be "
                "host-accessible; over device memory use alloy::BitmappedBlock<BlockSize, Alignment, Parent>, whose "
                "bookkeeping stays on the host");
  static_assert(MinSize != unbounded, "FreeList: MinSize = alloy::unbounded means nothing; use MinSize = 0 for no "
                                      "lower bound");
  static_assert(MaxSize == choose_at_runtime || MaxSize >= sizeof(void*),
                "FreeList: MaxSize must hold a pointer (the list is threaded through the free blocks); use MaxSize "
                ">= sizeof(void*)");
  static_assert(MaxSize != unbounded || MinSize == 0,
                "FreeList: MaxSize = alloy::unbounded is D's unchecked list and needs MinSize = 0 (with a lower "
                "bound, use a finite MaxSize or choose_at_runtime)");
  static_assert(MinSize == choose_at_runtime || MaxSize == choose_at_runtime || MinSize <= MaxSize,
                "FreeList: MinSize > MaxSize: no size would use the list; swap them");
  if constexpr (allocator<Parent>)  // else the class's own static_assert has said what Parent must be
    static_assert(Parent::alignment >= alignof(void*),
                  "FreeList: Parent::alignment must be at least alignof(void*) (a pointer is written at each free "
                  "block's start)");
  return true;
}

inline void* free_list_next(void* p) noexcept { return *static_cast<void**>(p); }
inline void free_list_link(void* p, void* next) noexcept { ::new (p) void*(next); }

}  // namespace detail

/// FreeList<Parent, MinSize, MaxSize = MinSize, Adaptive = Adaptive::no>
///
/// Semantics: D's FreeList. A request of n bytes with MinSize <= n <= MaxSize ("eligible") is served from a list of
/// freed blocks threaded through the blocks themselves; when the list is empty, Parent is asked for MaxSize bytes
/// (so every list block has MaxSize bytes) and the caller gets exactly n. Eligible blocks that are deallocated go
/// on the list; every other request and block goes to Parent. `MinSize == MaxSize` serves exactly one size.
/// Either bound may be `choose_at_runtime`: the constructor then takes it (`FreeList(max)`, `FreeList(min, max)`,
/// `FreeList(parent, ...)`, min first). `FreeList<P, 0, unbounded>` is D's unchecked list: every request uses the
/// list with no size check, so it is correct only under an owner that sends it one size (a Bucketizer bucket, a
/// Segregator slice); misses ask Parent for exactly n. With `Adaptive::yes` the list follows D's adaptive rule:
/// it estimates the miss rate over a window of about 1000 requests and, while misses fall below 1%, gives one list
/// block back to Parent at each miss or ineligible request, so the list shrinks to what the hit rate needs.
/// The destructor gives the list back to Parent (`minimize()`); D leaves it to the GC.
/// Capabilities: allocate, deallocate (list blocks: true; others: Parent's answer, false without Parent::deallocate),
/// good_alloc_size (Parent's size for MaxSize when eligible, else Parent's for n); owns iff Parent has owns;
/// expand iff Parent has expand and the list is checked (in place up to MaxSize for a list block); reallocate iff
/// Parent has reallocate and the list is checked (a list block stays in place while the size stays eligible;
/// crossing the bounds moves it); deallocate_all iff Parent has deallocate_all (empties the list too);
/// minimize iff Parent has deallocate and the list is checked; `min()`, `max()`, `parent()`.
/// Alignment and memory space: Parent's.
/// Parent: host-accessible (the list is written into the free blocks); alignment at least alignof(void*).
/// Adaptive::yes needs Parent::deallocate (checked lists).
/// Thread safety: none (see SharedFreeList).
/// Failure: an empty Block for n == 0 and when Parent refuses.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// alloy::FreeList<alloy::Mallocator, 17, 64> fl;
/// alloy::Block a = fl.allocate(20);                 // a miss: 64 bytes from malloc, 20 handed out
/// CHECK(a.size == 20);
/// CHECK(fl.deallocate(a));                          // onto the list
/// alloy::Block b = fl.allocate(64);                 // a hit: the same 64 bytes
/// CHECK(b.ptr == a.ptr);
/// CHECK(fl.good_alloc_size(17) == 64);
/// alloy::Block c = fl.allocate(100);                // not eligible: straight from malloc
/// CHECK(fl.deallocate(c));
/// CHECK(fl.deallocate(b));                          // the destructor frees the list
/// static_assert(!alloy::has_owns<alloy::FreeList<alloy::Mallocator, 64>>);  // Mallocator cannot answer owns
/// ```
template <class Parent, std::size_t MinSize, std::size_t MaxSize = MinSize, Adaptive Adapt = Adaptive::no>
class FreeList {
  static_assert(allocator<Parent>,
                "FreeList: Parent must be an alloy allocator (a type with `static constexpr std::size_t alignment` "
                "and `Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator); a std allocator, a "
                "std::pmr::memory_resource or a type whose allocate returns void* is not one");
  static_assert(detail::free_list_checks<Parent, MinSize, MaxSize>());
  using Bounds = detail::FreeListBounds<MinSize, MaxSize>;
  static_assert(Adapt == Adaptive::no || Bounds::unchecked || has_deallocate<Parent>,
                "FreeList: Adaptive::yes gives list blocks back to Parent, which needs deallocate; use Adaptive::no "
                "or a Parent with deallocate");
  static constexpr bool adaptive = Adapt == Adaptive::yes;

 public:
  static constexpr std::size_t alignment = Parent::alignment;
  static constexpr MemorySpace memory_space = memory_space_of<Parent>();
  static constexpr bool unchecked = Bounds::unchecked;
  using parent_type = Parent;

  FreeList() noexcept requires(Bounds::runtime_count == 0 && std::default_initializable<Parent>) = default;
  /// The bounds that are choose_at_runtime, min first.
  template <std::convertible_to<std::size_t>... N>
    requires(sizeof...(N) == Bounds::runtime_count && sizeof...(N) > 0 && std::default_initializable<Parent>)
  explicit FreeList(N... bounds) noexcept : bounds_(bounds...) {}
  template <std::convertible_to<std::size_t>... N>
    requires(sizeof...(N) == Bounds::runtime_count)
  explicit FreeList(Parent parent, N... bounds) noexcept(std::is_nothrow_move_constructible_v<Parent>)
      : parent_(std::move(parent)), bounds_(bounds...) {}
  FreeList(FreeList&& o) noexcept requires std::move_constructible<Parent>
      : parent_(std::move(o.parent_)), bounds_(o.bounds_), root_(std::exchange(o.root_, nullptr)) {}
  FreeList(const FreeList&) = delete;
  FreeList& operator=(const FreeList&) = delete;
  ~FreeList() {
    if constexpr (!unchecked && has_deallocate<Parent>) minimize();
  }

  std::size_t min() const noexcept { return bounds_.min(); }
  std::size_t max() const noexcept { return bounds_.max(); }

  Block allocate(std::size_t n) noexcept {
    if constexpr (adaptive) ++stats_.samples;
    if (bounds_.eligible(n)) {
      if (root_) return {pop(), n};
      const Block b = parent_.allocate(bounds_.block_size(n));
      if constexpr (adaptive) {
        ++stats_.misses;
        update_stats();
      }
      return b ? Block{b.ptr, n} : Block{};
    }
    if constexpr (adaptive) update_stats();
    return parent_.allocate(n);
  }

  bool deallocate(Block b) noexcept {
    if (!b) return true;
    if (bounds_.eligible(b.size)) {
      push(b.ptr);
      return true;
    }
    if constexpr (has_deallocate<Parent>) return parent_.deallocate(b);
    else return false;
  }

  /// A list block grows in place up to MaxSize; past it, Parent expands the MaxSize bytes. A block from Parent
  /// that would grow into [MinSize, MaxSize] cannot (it would later be taken for a MaxSize block).
  bool expand(Block& b, std::size_t delta) noexcept
    requires(has_expand<Parent> && !unchecked)
  {
    if (delta == 0) return true;
    if (!b) return false;
    std::size_t n = 0;
    if (!add_checked(b.size, delta, n)) return false;
    if (bounds_.eligible(b.size)) {
      if (n <= max()) {
        b.size = n;
        return true;
      }
      Block real{b.ptr, max()};
      if (!parent_.expand(real, n - max())) return false;
      b.size = n;
      return true;
    }
    if (bounds_.eligible(n)) return false;
    return parent_.expand(b, delta);
  }

  bool reallocate(Block& b, std::size_t n) noexcept
    requires(has_reallocate<Parent> && !unchecked)
  {
    if (b && b.size == n) return true;
    if (bool r; detail::reallocate_ends(*this, b, n, r)) return r;
    const bool from = bounds_.eligible(b.size), to = bounds_.eligible(n);
    if (from && to) {  // the block has MaxSize bytes either way
      b.size = n;
      return true;
    }
    if (!from && !to) return parent_.reallocate(b, n);
    return detail::move_block(*this, b, allocate(n));
  }

  Ternary owns(Block b) noexcept
    requires has_owns<Parent>
  {
    return parent_.owns(b);
  }

  /// Empties the list and gives everything back to Parent.
  bool deallocate_all() noexcept
    requires has_deallocate_all<Parent>
  {
    root_ = nullptr;
    return parent_.deallocate_all();
  }

  /// MaxSize rounded by Parent for an eligible n (what a list block holds), else Parent's answer for n.
  std::size_t good_alloc_size(std::size_t n) noexcept {
    if constexpr (!unchecked)
      if (bounds_.eligible(n)) return alloy::good_alloc_size(parent_, max());
    return alloy::good_alloc_size(parent_, n);
  }

  /// Gives every block on the list back to Parent (D's nonstandard `minimize`).
  void minimize() noexcept
    requires(has_deallocate<Parent> && !unchecked)
  {
    while (root_) parent_.deallocate(Block{pop(), max()});
  }

  Parent& parent() noexcept { return parent_; }
  const Parent& parent() const noexcept { return parent_; }

 private:
  void* pop() noexcept {
    void* p = root_;
    root_ = detail::free_list_next(p);
    return p;
  }
  void push(void* p) noexcept {
    detail::free_list_link(p, root_);
    root_ = p;
  }
  // D's estimate: the miss probability over a window of 1000 requests; below 1% one list block goes back.
  void update_stats() noexcept
    requires adaptive
  {
    stats_.prob_miss = (stats_.prob_miss * 1000.0 + static_cast<double>(stats_.misses)) /
                       (1000.0 + static_cast<double>(stats_.samples));
    stats_.samples = stats_.misses = 0;
    if constexpr (!unchecked)
      if (stats_.prob_miss < 0.01 && root_) parent_.deallocate(Block{pop(), max()});
  }

  struct NoStats {};
  struct Stats {
    double prob_miss = 1.0;
    std::uint32_t samples = 0, misses = 0;
  };
  [[no_unique_address]] Parent parent_{};
  [[no_unique_address]] Bounds bounds_{};
  void* root_ = nullptr;
  [[no_unique_address]] std::conditional_t<adaptive, Stats, NoStats> stats_{};
};

/// ContiguousFreeList<Parent, MinSize, MaxSize = MinSize>
///
/// Semantics: D's ContiguousFreeList: a free list over one contiguous chunk cut into items of MaxSize bytes (the
/// stride rounded up to alignof(void*)), all free at the start. An eligible request (MinSize <= n <= MaxSize) pops
/// an item; every other request, and an eligible one when no item is free, goes to Parent for exactly n bytes.
/// Giving back a block inside the chunk pushes it, any other goes to Parent. Pay up front, a hard cap on the
/// items, better locality than FreeList. The chunk is a caller's `std::span<std::byte>` (borrowed, never freed),
/// or owned: `(bytes)` from a default-constructed Parent, `(parent, bytes)`; then the bounds that are
/// choose_at_runtime, min first. `MaxSize = unbounded` (with MinSize 0, D's form) takes the item size at run time
/// like choose_at_runtime; unlike D, a request larger than an item is never served from one.
/// Capabilities: allocate, deallocate (chunk blocks; others to Parent, false without Parent::deallocate), empty
/// (no item and no Parent block live), good_alloc_size (the item stride when eligible, else Parent's);
/// owns iff Parent has owns (yes inside the chunk, else Parent's answer); deallocate_all iff Parent is
/// NullAllocator (every item free again); `capacity()` (items), `min()`, `max()`.
/// Alignment: Parent's, capped by the largest power of two dividing the item stride (alignof(void*) when the
/// item size is chosen at run time). Memory space: Parent's (host-accessible only).
/// Parent: host-accessible (the list is written into the items). A chunk too small for one item leaves a list
/// that forwards every request to Parent (D's rule).
/// Thread safety: none.
/// Failure: an empty Block for n == 0 and when an ineligible (or overflowing) request is refused by Parent.
/// Example:
/// ```cpp
/// alignas(64) std::byte buf[4 * 64];
/// alloy::ContiguousFreeList<alloy::NullAllocator, 33, 64> fl{std::span<std::byte>(buf)};
/// CHECK(fl.capacity() == 4);
/// alloy::Block a = fl.allocate(40);
/// CHECK(fl.owns(a) == alloy::Ternary::yes);
/// CHECK(fl.empty() == alloy::Ternary::no);
/// CHECK(!fl.allocate(65));                          // not eligible, and NullAllocator has nothing
/// CHECK(fl.deallocate(a));
/// CHECK(fl.empty() == alloy::Ternary::yes);
/// ```
template <class Parent, std::size_t MinSize, std::size_t MaxSize = MinSize>
class ContiguousFreeList {
  static_assert(allocator<Parent>,
                "ContiguousFreeList: Parent must be an alloy allocator (a type with `static constexpr std::size_t "
                "alignment` and `Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator, or "
                "alloy::NullAllocator for a caller's span); a std allocator, a std::pmr::memory_resource or a type "
                "whose allocate returns void* is not one");
  static_assert(detail::free_list_checks<Parent, MinSize, MaxSize>());
  static constexpr bool runtime_item = MaxSize == choose_at_runtime || MaxSize == unbounded;
  // D's (0, unbounded) takes the item size at run time: the bounds are then (0, choose_at_runtime).
  using Bounds = detail::FreeListBounds<MinSize, runtime_item ? choose_at_runtime : MaxSize>;
  static constexpr bool can_own = !std::is_same_v<Parent, NullAllocator>;
  static constexpr std::size_t static_stride = runtime_item ? alignof(void*) : round_up(MaxSize, alignof(void*));
  static constexpr std::size_t stride_alignment = static_stride & (~static_stride + 1);

 public:
  static constexpr std::size_t alignment = Parent::alignment < stride_alignment ? Parent::alignment : stride_alignment;
  static constexpr MemorySpace memory_space = memory_space_of<Parent>();
  using parent_type = Parent;

  /// Over a caller's memory (borrowed): its part aligned to `alignment`.
  template <std::convertible_to<std::size_t>... N>
    requires(sizeof...(N) == Bounds::runtime_count && std::default_initializable<Parent>)
  explicit ContiguousFreeList(std::span<std::byte> store, N... bounds) noexcept : bounds_(bounds...) {
    if (store.data() == nullptr) return;
    const std::uintptr_t b = address_of(store.data()), a = align_up(b, alignment);
    if (a - b >= store.size()) return;
    build(static_cast<std::byte*>(to_pointer(a)), store.size() - (a - b));
  }
  /// Owns `bytes` from a default-constructed Parent.
  template <std::convertible_to<std::size_t>... N>
    requires(can_own && sizeof...(N) == Bounds::runtime_count && std::default_initializable<Parent>)
  explicit ContiguousFreeList(std::size_t bytes, N... bounds) noexcept : bounds_(bounds...) {
    acquire(bytes);
  }
  template <std::convertible_to<std::size_t>... N>
    requires(can_own && sizeof...(N) == Bounds::runtime_count)
  ContiguousFreeList(Parent parent, std::size_t bytes, N... bounds) noexcept(
      std::is_nothrow_move_constructible_v<Parent>)
      : parent_(std::move(parent)), bounds_(bounds...) {
    acquire(bytes);
  }
  ContiguousFreeList(ContiguousFreeList&& o) noexcept requires std::move_constructible<Parent>
      : parent_(std::move(o.parent_)),
        bounds_(o.bounds_),
        root_(std::exchange(o.root_, nullptr)),
        support_(std::exchange(o.support_, {})),
        stride_(o.stride_),
        allocated_(std::exchange(o.allocated_, 0)),
        parent_live_(std::exchange(o.parent_live_, 0)),
        owned_(std::exchange(o.owned_, false)) {}
  ContiguousFreeList(const ContiguousFreeList&) = delete;
  ContiguousFreeList& operator=(const ContiguousFreeList&) = delete;
  ~ContiguousFreeList() {
    if constexpr (can_own && has_deallocate<Parent>)
      if (owned_) parent_.deallocate(support_);
  }

  std::size_t min() const noexcept { return bounds_.min(); }
  std::size_t max() const noexcept { return bounds_.max(); }
  /// Items in the chunk.
  std::size_t capacity() const noexcept { return stride_ ? support_.size / stride_ : 0; }

  Block allocate(std::size_t n) noexcept {
    if (root_ && bounds_.eligible(n)) {
      void* p = root_;
      root_ = detail::free_list_next(p);
      ++allocated_;
      return {p, n};
    }
    const Block b = parent_.allocate(n);
    if (b) ++parent_live_;
    return b;
  }

  bool deallocate(Block b) noexcept {
    if (!b) return true;
    if (in_support(b.ptr)) {
      // Refused (false, nothing changed) in release builds too, where it is cheap to tell: a size no item has, a
      // pointer off an item's start, or no item handed out (a double free once every item is back). A double free
      // while other items are out is not detected (docs/primitives.md, "Misuse").
      const bool item = bounds_.eligible(b.size) && allocated_ > 0 &&
                        (address_of(b.ptr) - address_of(support_.ptr)) % stride_ == 0;
      ALLOY_ASSERT(item, "ContiguousFreeList::deallocate: not an item of this list, or freed twice");
      if (!item) return false;
      detail::free_list_link(b.ptr, root_);
      root_ = b.ptr;
      --allocated_;
      return true;
    }
    if constexpr (has_deallocate<Parent>) {
      if (!parent_.deallocate(b)) return false;
      --parent_live_;
      return true;
    } else {
      return false;
    }
  }

  Ternary owns(Block b) noexcept
    requires has_owns<Parent>
  {
    if (!b) return Ternary::no;
    if (block_within(b, support_.ptr, support_.size)) return Ternary::yes;
    if (in_support(b.ptr)) return Ternary::no;  // starts inside the chunk, runs past it
    return parent_.owns(b);
  }

  Ternary empty() const noexcept { return to_ternary(allocated_ == 0 && parent_live_ == 0); }

  /// Every item free again (NullAllocator parent: nothing else is live).
  bool deallocate_all() noexcept
    requires(!can_own)
  {
    build(static_cast<std::byte*>(support_.ptr), support_.size);
    parent_live_ = 0;
    return true;
  }

  std::size_t good_alloc_size(std::size_t n) noexcept {
    if (bounds_.eligible(n) && stride_) return stride_;
    return hint_at_least(alloy::good_alloc_size(parent_, n), n, alignment);  // its alignment may be below Parent's
  }

  Parent& parent() noexcept { return parent_; }
  const Parent& parent() const noexcept { return parent_; }

 private:
  bool in_support(const void* p) const noexcept {
    const auto a = address_of(p), lo = address_of(support_.ptr);
    return a >= lo && a - lo < support_.size;
  }
  void acquire(std::size_t bytes) noexcept {
    std::size_t r = 0;
    if (bytes == 0 || !round_up_checked(bytes, alignment, r)) return;
    const Block b = parent_.allocate(r);
    if (!b) return;
    owned_ = true;
    build(static_cast<std::byte*>(b.ptr), b.size);
    support_ = b;  // the whole block, as the parent gave it (freed by the destructor)
  }
  // Threads the list through [p, p + size), first item at p.
  void build(std::byte* p, std::size_t size) noexcept {
    allocated_ = 0;
    root_ = nullptr;
    stride_ = 0;
    support_ = {p, size};
    if (!p || bounds_.max() < sizeof(void*)) return;
    const std::size_t stride = round_up(bounds_.max(), alignof(void*));
    if (stride < bounds_.max()) return;
    stride_ = stride;
    const std::size_t items = size / stride;
    for (std::size_t i = items; i-- > 0;) {
      detail::free_list_link(p + i * stride, root_);
      root_ = p + i * stride;
    }
  }

  [[no_unique_address]] Parent parent_{};
  [[no_unique_address]] Bounds bounds_{};
  void* root_ = nullptr;
  Block support_{};
  std::size_t stride_ = 0, allocated_ = 0, parent_live_ = 0;
  bool owned_ = false;
};

namespace detail {

// The head of a lock-free stack: a pointer and a count of successful updates, compared and swapped together with
// one double-width compare-and-swap (cmpxchg16b), so a head that was popped and pushed back (ABA) carries another
// count and a stale compare-and-swap fails. Where that instruction is not available without libatomic (targets
// other than x86-64; clang with ThreadSanitizer, which lowers it to a libatomic call), a spin lock guards the pair.
#if defined(__x86_64__) && !(defined(__clang__) && defined(ALLOY_DETAIL_TSAN))
#define ALLOY_DETAIL_CAS16 1
#endif
#if defined(ALLOY_DETAIL_CAS16)
__extension__ typedef unsigned __int128 uint128;  // NOLINT(modernize-use-using): __extension__ takes no alias-declaration
#endif
struct alignas(16) TaggedPointer {
  void* ptr;
  std::uint64_t tag;
};

#if defined(ALLOY_DETAIL_CAS16)
// The double-width compare-and-swap, in a function compiled for cx16 (no -mcx16 flag needed). Not inlined: clang 14
// lowers it to a libatomic call once it is inlined into a caller compiled without cx16. The bool form, which both
// compilers expand to `lock cmpxchg16b` (clang calls libatomic for the value-returning one).
[[gnu::noinline, gnu::target("cx16")]] inline bool cas16(uint128* p, uint128 expected, uint128 desired) noexcept {
  return __sync_bool_compare_and_swap(p, expected, desired);
}
#endif

class TaggedHead {
 public:
  static constexpr bool lock_free =
#if defined(ALLOY_DETAIL_CAS16)
      true;
#else
      false;
#endif

  // The tag first, then the pointer: a pair torn by an update in between never matches the head, so the
  // compare-and-swap that uses it fails.
  TaggedPointer load() const noexcept {
#if defined(ALLOY_DETAIL_CAS16)
    // seq_cst (a plain load on x86-64): SharedFreeList's cap relies on a pop's count of pops in flight being
    // ordered before its read of the head, against a deallocate that reads the count after the block was popped.
    const std::uint64_t t = __atomic_load_n(&h_.tag, __ATOMIC_SEQ_CST);
    void* const p = __atomic_load_n(&h_.ptr, __ATOMIC_SEQ_CST);
    return {p, t};
#else
    lock();
    const TaggedPointer r = h_;
    unlock();
    return r;
#endif
  }
  // On failure `expected` is the current head.
  bool compare_exchange(TaggedPointer& expected, TaggedPointer desired) noexcept {
#if defined(ALLOY_DETAIL_CAS16)
    uint128 e = 0, d = 0;
    std::memcpy(&e, &expected, sizeof e);
    std::memcpy(&d, &desired, sizeof d);
    if (cas16(reinterpret_cast<uint128*>(&h_), e, d)) return true;
    expected = load();
    return false;
#else
    lock();
    const bool ok = h_.ptr == expected.ptr && h_.tag == expected.tag;
    if (ok) h_ = desired;
    else expected = h_;
    unlock();
    return ok;
#endif
  }
  // Only while no other thread uses the head.
  void reset() noexcept { h_ = {nullptr, h_.tag + 1}; }

 private:
#if !defined(ALLOY_DETAIL_CAS16)
  void lock() const noexcept {
    while (lock_.test_and_set(std::memory_order_acquire)) {
    }
  }
  void unlock() const noexcept { lock_.clear(std::memory_order_release); }
  mutable std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
#endif
  TaggedPointer h_{nullptr, 0};
};

// The next pointer of a block that another thread may have popped and be writing (a pop reads it before its
// compare-and-swap, which then fails): read atomically, and hidden from ThreadSanitizer, whose report of that
// benign race would be a false alarm.
inline void* shared_free_list_next(void* p) noexcept {
#if defined(ALLOY_DETAIL_TSAN)
  AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
#endif
  void* const n = __atomic_load_n(static_cast<void**>(p), __ATOMIC_RELAXED);
#if defined(ALLOY_DETAIL_TSAN)
  AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
#endif
  return n;
}
inline void shared_free_list_link(void* p, void* next) noexcept {
  __atomic_store_n(static_cast<void**>(p), next, __ATOMIC_RELAXED);
}

}  // namespace detail

/// SharedFreeList<Parent, MinSize, MaxSize = MinSize, ApproxMaxNodes = unbounded>
///
/// Semantics: FreeList for many threads, lock-free: the list is a Treiber stack whose head (a pointer and an
/// update count) changes by one 128-bit compare-and-swap, so a block popped and pushed back between another
/// thread's read and its compare-and-swap (ABA) cannot corrupt the list. Bounds as FreeList's (choose_at_runtime
/// through the constructor, min first, then ApproxMaxNodes when it is choose_at_runtime). With a finite
/// ApproxMaxNodes the list holds about that many blocks; the rest go back to Parent, but only while no pop is
/// under way (a pop may still read the block it saw at the head), else onto the list: the cap is approximate, as
/// D's. D guards its list with a spin lock; alloy's is lock-free.
/// Capabilities: allocate, deallocate, good_alloc_size (as FreeList); owns iff Parent has owns; deallocate_all
/// iff Parent has deallocate_all; minimize iff Parent has deallocate and the list is checked. No expand and no
/// reallocate (D forwards them to Parent, which does not know a list block's real size); `alloy::reallocate`
/// works through allocate, copy and deallocate. `lock_free` says whether the head is lock-free on this target.
/// Alignment and memory space: Parent's.
/// Parent: host-accessible, thread-safe (its primitives are called concurrently), alignment at least
/// alignof(void*); Parent::deallocate when ApproxMaxNodes is finite.
/// Thread safety: allocate, deallocate, owns and good_alloc_size may be called concurrently; deallocate_all,
/// minimize and the destructor only while no other thread uses the list.
/// Failure: as FreeList.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// #include <thread>
/// alloy::SharedFreeList<alloy::Mallocator, 64> fl;
/// std::thread t([&] { CHECK(fl.deallocate(fl.allocate(64))); });
/// alloy::Block b = fl.allocate(64);
/// t.join();
/// CHECK(b.size == 64);
/// CHECK(fl.deallocate(b));
/// ```
template <class Parent, std::size_t MinSize, std::size_t MaxSize = MinSize, std::size_t ApproxMaxNodes = unbounded>
class SharedFreeList {
  static_assert(allocator<Parent>,
                "SharedFreeList: Parent must be an alloy allocator (a type with `static constexpr std::size_t "
                "alignment` and `Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator); a std allocator, a "
                "std::pmr::memory_resource or a type whose allocate returns void* is not one");
  static_assert(detail::free_list_checks<Parent, MinSize, MaxSize>());
  static_assert(ApproxMaxNodes != 0, "SharedFreeList: ApproxMaxNodes must not be 0; use alloy::unbounded for no cap");
  static_assert(ApproxMaxNodes == unbounded || has_deallocate<Parent>,
                "SharedFreeList: a finite ApproxMaxNodes gives the blocks beyond it back to Parent, which needs "
                "deallocate; use ApproxMaxNodes = alloy::unbounded");
  using Bounds = detail::FreeListBounds<MinSize, MaxSize>;
  static constexpr bool capped = ApproxMaxNodes != unbounded;
  static constexpr bool cap_runtime = ApproxMaxNodes == choose_at_runtime;

 public:
  static constexpr std::size_t alignment = Parent::alignment;
  static constexpr MemorySpace memory_space = memory_space_of<Parent>();
  static constexpr bool unchecked = Bounds::unchecked;
  static constexpr bool lock_free = detail::TaggedHead::lock_free;
  static constexpr std::size_t runtime_count = Bounds::runtime_count + std::size_t{cap_runtime};
  using parent_type = Parent;

  SharedFreeList() noexcept requires(runtime_count == 0 && std::default_initializable<Parent>) = default;
  template <std::convertible_to<std::size_t>... N>
    requires(sizeof...(N) == runtime_count && sizeof...(N) > 0 && std::default_initializable<Parent>)
  explicit SharedFreeList(N... v) noexcept {
    init(static_cast<std::size_t>(v)...);
  }
  template <std::convertible_to<std::size_t>... N>
    requires(sizeof...(N) == runtime_count)
  explicit SharedFreeList(Parent parent, N... v) noexcept(std::is_nothrow_move_constructible_v<Parent>)
      : parent_(std::move(parent)) {
    init(static_cast<std::size_t>(v)...);
  }
  SharedFreeList(const SharedFreeList&) = delete;
  SharedFreeList& operator=(const SharedFreeList&) = delete;
  ~SharedFreeList() {
    if constexpr (!unchecked && has_deallocate<Parent>) minimize();
  }

  std::size_t min() const noexcept { return bounds_.min(); }
  std::size_t max() const noexcept { return bounds_.max(); }
  std::size_t approx_max_nodes() const noexcept {
    if constexpr (cap_runtime) return cap_;
    else return ApproxMaxNodes;
  }

  Block allocate(std::size_t n) noexcept {
    if (!bounds_.eligible(n)) return parent_.allocate(n);
    if (void* p = pop()) return {p, n};
    const Block b = parent_.allocate(bounds_.block_size(n));
    return b ? Block{b.ptr, n} : Block{};
  }

  bool deallocate(Block b) noexcept {
    if (!b) return true;
    if (bounds_.eligible(b.size)) {
      if constexpr (capped) {
        // Over the cap the block goes back to Parent, unless a pop is under way: it may have read this block at
        // the head before it was popped, and reads its next pointer still.
        if (nodes_.load(std::memory_order_relaxed) >= approx_max_nodes() &&
            in_flight_.load(std::memory_order_seq_cst) == 0)
          return parent_.deallocate(Block{b.ptr, bounds_.block_size(b.size)});
        nodes_.fetch_add(1, std::memory_order_relaxed);
      }
      push(b.ptr);
      return true;
    }
    if constexpr (has_deallocate<Parent>) return parent_.deallocate(b);
    else return false;
  }

  Ternary owns(Block b) noexcept
    requires has_owns<Parent>
  {
    return parent_.owns(b);
  }

  /// Empties the list and gives everything back to Parent. Only while no other thread uses the list.
  bool deallocate_all() noexcept
    requires has_deallocate_all<Parent>
  {
    head_.reset();
    if constexpr (capped) nodes_.store(0, std::memory_order_relaxed);
    return parent_.deallocate_all();
  }

  std::size_t good_alloc_size(std::size_t n) noexcept {
    if constexpr (!unchecked)
      if (bounds_.eligible(n)) return alloy::good_alloc_size(parent_, max());
    return alloy::good_alloc_size(parent_, n);
  }

  /// Gives every block on the list back to Parent. Only while no other thread uses the list.
  void minimize() noexcept
    requires(has_deallocate<Parent> && !unchecked)
  {
    while (void* p = pop()) parent_.deallocate(Block{p, max()});
    if constexpr (capped) nodes_.store(0, std::memory_order_relaxed);
  }

  Parent& parent() noexcept { return parent_; }

 private:
  template <class... N>
  void init(N... v) noexcept {
    const std::size_t vals[] = {v..., 0};
    if constexpr (Bounds::runtime_count == 1) bounds_ = Bounds(vals[0]);
    if constexpr (Bounds::runtime_count == 2) bounds_ = Bounds(vals[0], vals[1]);
    if constexpr (cap_runtime) {
      cap_ = vals[Bounds::runtime_count];
      ALLOY_ASSERT(cap_ != 0, "SharedFreeList: the node cap given at run time must not be 0");
    }
  }
  void* pop() noexcept {
    if constexpr (capped) in_flight_.fetch_add(1, std::memory_order_seq_cst);
    detail::TaggedPointer h = head_.load();
    while (h.ptr && !head_.compare_exchange(h, {detail::shared_free_list_next(h.ptr), h.tag + 1})) {
    }
    if constexpr (capped) {
      if (h.ptr) nodes_.fetch_sub(1, std::memory_order_relaxed);
      in_flight_.fetch_sub(1, std::memory_order_seq_cst);
    }
    return h.ptr;
  }
  void push(void* p) noexcept {
    detail::TaggedPointer h = head_.load();
    do detail::shared_free_list_link(p, h.ptr);
    while (!head_.compare_exchange(h, {p, h.tag + 1}));
  }

  struct None {};
  [[no_unique_address]] Parent parent_{};
  [[no_unique_address]] Bounds bounds_{};
  [[no_unique_address]] std::conditional_t<cap_runtime, std::size_t, None> cap_{};
  detail::TaggedHead head_;
  [[no_unique_address]] std::conditional_t<capped, std::atomic<std::size_t>, None> nodes_{}, in_flight_{};
};

}  // namespace alloy

#undef ALLOY_DETAIL_CAS16
#undef ALLOY_DETAIL_TSAN
