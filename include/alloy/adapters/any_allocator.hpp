#pragma once
/// \file alloy/adapters/any_allocator.hpp
#include <atomic>
#include <concepts>
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include <alloy/common.hpp>
#include <alloy/null_allocator.hpp>

namespace alloy {

namespace detail {

/// The table of one erased stack type, one entry per primitive, plus its run-time properties.
struct AnyVTable {
  std::size_t (*alignment)(void*) noexcept;  // functions, not constants: an erased AnyAllocator answers at run time
  MemorySpace (*space)(void*) noexcept;
  bool owning;
  Block (*allocate)(void*, std::size_t) noexcept;
  Block (*aligned_allocate)(void*, std::size_t, std::size_t) noexcept;
  Block (*allocate_all)(void*) noexcept;
  Block (*allocate_fresh)(void*, std::size_t) noexcept;
  bool (*expand)(void*, Block&, std::size_t) noexcept;
  bool (*reallocate)(void*, Block&, std::size_t) noexcept;
  bool (*aligned_reallocate)(void*, Block&, std::size_t, std::size_t) noexcept;
  Ternary (*owns)(void*, Block) noexcept;
  Ternary (*resolve_internal_pointer)(void*, const void*, Block&) noexcept;
  bool (*deallocate)(void*, Block) noexcept;
  bool (*deallocate_all)(void*) noexcept;
  Ternary (*empty)(void*) noexcept;
  std::size_t (*good_alloc_size)(void*, std::size_t) noexcept;
  Block (*allocate_stream)(void*, stream_view, std::size_t) noexcept;
  bool (*deallocate_stream)(void*, stream_view, Block) noexcept;
  bool (*copy)(void*, void*, const void*, std::size_t, stream_view) noexcept;
  void (*retain)(void*) noexcept;
  void (*release)(void*) noexcept;
};

/// An owned stateful stack and its reference count (D's CAllocatorImpl with its `rc`).
template <class A>
struct AnyHolder {
  std::atomic<std::size_t> refs{1};
  A a;
  template <class... Args>
  explicit AnyHolder(Args&&... args) : a(std::forward<Args>(args)...) {}
};

/// A stateless, default-constructible, trivially destructible stack: stored nowhere, one static object serves.
template <class A>
inline constexpr bool any_inline =
    stateless_allocator<A> && std::is_default_constructible_v<A> && std::is_trivially_destructible_v<A>;

enum class AnyMode { inline_stateless, owning, referring };

template <class A, AnyMode M>
struct AnyOps {
  static A& get(void* p) noexcept {
    if constexpr (M == AnyMode::inline_stateless) {
      (void)p;
      return stateless_instance<A>();
    } else if constexpr (M == AnyMode::owning) {
      return static_cast<AnyHolder<A>*>(p)->a;
    } else {
      return *static_cast<A*>(p);
    }
  }
  // Whether bytes can be moved between two blocks of A (for the generic reallocate fallbacks).
  static constexpr bool can_copy = host_accessible<A> || has_copy<A>;

  static std::size_t alignment(void* p) noexcept { return alignment_at_run_time(get(p)); }
  static MemorySpace space(void* p) noexcept { return memory_space_at_run_time(get(p)); }
  static Block allocate(void* p, std::size_t n) noexcept { return get(p).allocate(n); }
  static Block aligned_allocate(void* p, std::size_t n, std::size_t al) noexcept {
    if constexpr (has_aligned_allocate<A>) {
      return get(p).aligned_allocate(n, al);
    } else {  // the stack's own alignment may be enough
      if (!is_power_of_two(al) || al > A::alignment) return {};
      return get(p).allocate(n);
    }
  }
  static Block allocate_all(void* p) noexcept {
    if constexpr (has_allocate_all<A>) return get(p).allocate_all();
    else return (void)p, Block{};
  }
  static Block allocate_fresh(void* p, std::size_t n) noexcept {
    if constexpr (has_allocate_fresh<A>) return get(p).allocate_fresh(n);
    else return (void)p, (void)n, Block{};
  }
  static bool expand(void* p, Block& b, std::size_t d) noexcept {
    if constexpr (has_expand<A>) return get(p).expand(b, d);
    else return (void)p, (void)b, d == 0;
  }
  static bool reallocate(void* p, Block& b, std::size_t n) noexcept {
    if constexpr (has_reallocate<A> || can_copy) {
      return alloy::reallocate(get(p), b, n);
    } else {  // no way to move bytes: only in place
      if (b.size == n) return true;
      if constexpr (has_expand<A>) return n > b.size && b && get(p).expand(b, n - b.size);
      return false;
    }
  }
  static bool aligned_reallocate(void* p, Block& b, std::size_t n, std::size_t al) noexcept {
    if constexpr (has_aligned_allocate<A> && (has_aligned_reallocate<A> || can_copy)) {
      return alloy::aligned_reallocate(get(p), b, n, al);
    } else {  // as aligned_allocate: the stack's own alignment may be enough (else make's expand_array of ints
              // over an AnyAllocator, whose static alignment is 1, would always fail)
      if (!is_power_of_two(al) || al > A::alignment) return false;
      return reallocate(p, b, n);
    }
  }
  static Ternary owns(void* p, Block b) noexcept { return alloy::owns(get(p), b); }
  static Ternary resolve_internal_pointer(void* p, const void* q, Block& r) noexcept {
    if constexpr (has_resolve_internal_pointer<A>) return get(p).resolve_internal_pointer(q, r);
    else return (void)p, (void)q, (void)r, Ternary::unknown;
  }
  static bool deallocate(void* p, Block b) noexcept { return alloy::deallocate(get(p), b); }
  static bool deallocate_all(void* p) noexcept {
    if constexpr (has_deallocate_all<A>) return get(p).deallocate_all();
    else return (void)p, false;
  }
  static Ternary empty(void* p) noexcept {
    if constexpr (has_empty<A>) return get(p).empty();
    else return (void)p, Ternary::unknown;
  }
  static std::size_t good_alloc_size(void* p, std::size_t n) noexcept { return alloy::good_alloc_size(get(p), n); }
  static Block allocate_stream(void* p, stream_view s, std::size_t n) noexcept {
    if constexpr (has_stream_ordered<A>) return get(p).allocate(s, n);
    else return (void)s, get(p).allocate(n);
  }
  static bool deallocate_stream(void* p, stream_view s, Block b) noexcept {
    if constexpr (has_stream_ordered<A>) return get(p).deallocate(s, b);
    else return (void)s, alloy::deallocate(get(p), b);
  }
  static bool copy(void* p, void* d, const void* s, std::size_t n, stream_view st) noexcept {
    if constexpr (can_copy) return alloy::copy(get(p), d, s, n, st);
    else return (void)p, (void)d, (void)s, (void)st, n == 0;
  }
  static void retain(void* p) noexcept {
    if constexpr (M == AnyMode::owning) static_cast<AnyHolder<A>*>(p)->refs.fetch_add(1, std::memory_order_relaxed);
    else (void)p;
  }
  static void release(void* p) noexcept {
    if constexpr (M == AnyMode::owning) {
      auto* h = static_cast<AnyHolder<A>*>(p);
      if (h->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete h;
    } else {
      (void)p;
    }
  }

  static constexpr AnyVTable table{&alignment, &space, M == AnyMode::owning,
                                   &allocate, &aligned_allocate, &allocate_all, &allocate_fresh, &expand,
                                   &reallocate, &aligned_reallocate, &owns, &resolve_internal_pointer, &deallocate,
                                   &deallocate_all, &empty, &good_alloc_size, &allocate_stream, &deallocate_stream,
                                   &copy, &retain, &release};
};

}  // namespace detail

/// AnyAllocator
///
/// Semantics: the one run-time type-erasure boundary of alloy, after D's `IAllocator` / `allocatorObject`: any stack
/// behind one type, for code that picks its allocator at run time (a `Buffer` that lives on the host or on a device,
/// as KuiperInfer's DeviceAllocator: allocate / release / memcpy, with the device type known at run time). Every
/// call goes through one indirect jump.
/// Ownership: `AnyAllocator(a)` owns a copy (or the moved) stack, `AnyAllocator(std::in_place_type<A>, args...)` one
/// built in place; copies of the AnyAllocator share it, counted
/// (D's RCIAllocator), and the last one destroys it. A stateless stack (Mallocator) is stored nowhere.
/// `AnyAllocator(&a)` refers to a stack that lives elsewhere and must outlive it (D's `allocatorObject(&a)`).
/// A default-constructed AnyAllocator erases NullAllocator. Two AnyAllocators are equal when they erase the same
/// stateless type or share (or refer to) the same stack object.
/// Capabilities: every primitive, as D's IAllocator: an unsupported one answers as D's `CAllocatorImpl` does:
/// `allocate_all`, `allocate_fresh` empty; `expand` true only for delta 0; `owns`, `empty`,
/// `resolve_internal_pointer` unknown (owns of the empty Block: no); `deallocate` false (true for the empty Block);
/// `deallocate_all` false; `aligned_reallocate` false (but see below); `reallocate` and `good_alloc_size` use
/// alloy's generic fallbacks. The stream-ordered pair falls back to the plain one. `copy` moves bytes through the
/// stack's copy primitive (std::memmove on host memory); false when the stack has neither.
/// Differences from D: `aligned_allocate` on a stack without it still succeeds when the requested alignment is at
/// most the stack's own (D returns null), so `StlAllocator<T, AnyAllocator>` works over Mallocator; so does
/// `aligned_reallocate` (through `reallocate`), so make's `expand_array` works over it too.
/// Run-time properties: `runtime_alignment()` (the stack's `alignment`), `memory_space()`, `owning()`.
/// Compile-time properties: `alignment` is 1 (nothing is known about the stack at compile time; use
/// `runtime_alignment()`), and `memory_space_of<AnyAllocator>()` is device, the answer that holds for every stack it
/// may erase: a block stacked on an AnyAllocator keeps its bookkeeping on the host, and `StlAllocator`,
/// `PmrResource` and `CudaMrResource` refuse such a block (or a `Ref` to an AnyAllocator) at compile time. The
/// adapters accept an AnyAllocator itself and check `memory_space()` at run time; copies of an AnyAllocator share
/// its stack, so pass copies rather than `Ref`s. Code that touches memory behind an AnyAllocator asks
/// `memory_space()` or goes through `copy`.
/// Thread safety: the stack's; the reference count is atomic.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// #include <alloy/no_access_allocator.hpp>
/// alloy::AnyAllocator host{alloy::Mallocator{}};
/// alloy::AnyAllocator dev{alloy::NoAccessAllocator{}};
/// CHECK(dev.memory_space() == alloy::MemorySpace::device);
/// alloy::Block h = host.allocate(6), d = dev.allocate(6);
/// std::memcpy(h.ptr, "hello", 6);
/// CHECK(dev.copy(d.ptr, h.ptr, 6));               // host -> "device" through the stack's copy
/// CHECK(dev.owns(d) == alloy::Ternary::yes);
/// CHECK(host.owns(h) == alloy::Ternary::unknown); // Mallocator cannot tell: D's answer
/// CHECK(host.deallocate(h));
/// CHECK(dev.deallocate(d));
/// ```
class AnyAllocator {
 public:
  static constexpr std::size_t alignment = 1;

  /// Erases NullAllocator: every allocation fails.
  AnyAllocator() noexcept : AnyAllocator(NullAllocator{}) {}

  /// Owning: stores (a copy of) `a`, shared by the copies of this AnyAllocator. May throw std::bad_alloc when a
  /// stateful stack is stored (one heap record).
  template <class A>
    requires allocator<std::remove_cvref_t<A>> && (!std::is_same_v<std::remove_cvref_t<A>, AnyAllocator>)
  // Implicit: any stack converts to an AnyAllocator. The requires clause leaves AnyAllocator itself to the copy and
  // move constructors, which the forwarding reference would otherwise hide.
  // NOLINTNEXTLINE(google-explicit-constructor,bugprone-forwarding-reference-overload)
  AnyAllocator(A&& a) {
    using S = std::remove_cvref_t<A>;
    if constexpr (detail::any_inline<S>) {
      vt_ = &detail::AnyOps<S, detail::AnyMode::inline_stateless>::table;
      obj_ = nullptr;
    } else {
      vt_ = &detail::AnyOps<S, detail::AnyMode::owning>::table;
      obj_ = new detail::AnyHolder<S>(std::forward<A>(a));
    }
  }
  /// Owning, constructed in place from `args` (for stacks that cannot be moved).
  template <allocator A, class... Args>
    requires std::is_constructible_v<A, Args...>
  explicit AnyAllocator(std::in_place_type_t<A>, Args&&... args) {
    if constexpr (detail::any_inline<A>) {
      vt_ = &detail::AnyOps<A, detail::AnyMode::inline_stateless>::table;
      obj_ = nullptr;
    } else {
      vt_ = &detail::AnyOps<A, detail::AnyMode::owning>::table;
      obj_ = new detail::AnyHolder<A>(std::forward<Args>(args)...);
    }
  }
  /// Referring: uses `*a`, which must outlive this AnyAllocator and its copies.
  template <allocator A>
  explicit AnyAllocator(A* a) noexcept : vt_(&detail::AnyOps<A, detail::AnyMode::referring>::table), obj_(a) {
    ALLOY_ASSERT(a != nullptr, "AnyAllocator: the allocator pointer is null");
  }

  AnyAllocator(const AnyAllocator& o) noexcept : vt_(o.vt_), obj_(o.obj_) { vt_->retain(obj_); }
  AnyAllocator(AnyAllocator&& o) noexcept : vt_(o.vt_), obj_(o.obj_) {
    o.vt_ = &detail::AnyOps<NullAllocator, detail::AnyMode::inline_stateless>::table;
    o.obj_ = nullptr;
  }
  AnyAllocator& operator=(AnyAllocator o) noexcept {
    std::swap(vt_, o.vt_);
    std::swap(obj_, o.obj_);
    return *this;
  }
  ~AnyAllocator() { vt_->release(obj_); }

  // A template, so that it takes two AnyAllocators only: as a plain hidden friend, argument-dependent lookup found it
  // for any stack with an AnyAllocator among its template arguments (Region<AnyAllocator>), which then converted to
  // AnyAllocator (a heap copy of each) and looked equality-comparable.
  template <class T>
    requires std::same_as<T, AnyAllocator>
  friend bool operator==(const T& x, const T& y) noexcept {
    return x.vt_ == y.vt_ && x.obj_ == y.obj_;
  }

  // Run-time properties.
  [[nodiscard]] std::size_t runtime_alignment() const noexcept { return vt_->alignment(obj_); }
  [[nodiscard]] MemorySpace memory_space() const noexcept { return vt_->space(obj_); }
  [[nodiscard]] bool is_host_accessible() const noexcept { return memory_space() != MemorySpace::device; }
  [[nodiscard]] bool owning() const noexcept { return vt_->owning; }

  // The primitives.
  Block allocate(std::size_t n) noexcept { return vt_->allocate(obj_, n); }
  Block aligned_allocate(std::size_t n, std::size_t a) noexcept { return vt_->aligned_allocate(obj_, n, a); }
  Block allocate_all() noexcept { return vt_->allocate_all(obj_); }
  Block allocate_fresh(std::size_t n) noexcept { return vt_->allocate_fresh(obj_, n); }
  bool expand(Block& b, std::size_t d) noexcept { return vt_->expand(obj_, b, d); }
  bool reallocate(Block& b, std::size_t n) noexcept { return vt_->reallocate(obj_, b, n); }
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) noexcept {
    return vt_->aligned_reallocate(obj_, b, n, a);
  }
  Ternary owns(Block b) noexcept { return vt_->owns(obj_, b); }
  Ternary resolve_internal_pointer(const void* p, Block& r) noexcept {
    return vt_->resolve_internal_pointer(obj_, p, r);
  }
  bool deallocate(Block b) noexcept { return vt_->deallocate(obj_, b); }
  bool deallocate_all() noexcept { return vt_->deallocate_all(obj_); }
  Ternary empty() noexcept { return vt_->empty(obj_); }
  std::size_t good_alloc_size(std::size_t n) noexcept { return vt_->good_alloc_size(obj_, n); }
  Block allocate(stream_view s, std::size_t n) noexcept { return vt_->allocate_stream(obj_, s, n); }
  bool deallocate(stream_view s, Block b) noexcept { return vt_->deallocate_stream(obj_, s, b); }
  /// Copies n bytes into, out of or within the stack's memory (KuiperInfer's `memcpy`); false when it cannot.
  bool copy(void* dst, const void* src, std::size_t n, stream_view s = {}) noexcept {
    return vt_->copy(obj_, dst, src, n, s);
  }

 private:
  const detail::AnyVTable* vt_;
  void* obj_;
};

}  // namespace alloy
