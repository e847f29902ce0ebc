#pragma once
/// \file alloy/affix_allocator.hpp
/// AffixAllocator: a Prefix before and a Suffix after every block (D's building_blocks/affix_allocator.d).
///
/// The affixes live in the memory the parent hands out, so the parent must be host-accessible: over device memory
/// it does not compile, and the message names the alternative (keep per-block data on the host).
#include <concepts>
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include <alloy/common.hpp>

namespace alloy {

namespace detail {
template <class T>
inline constexpr std::size_t affix_size = 0;
template <class T>
  requires(!std::is_void_v<T>)
inline constexpr std::size_t affix_size<T> = sizeof(T);
template <class T>
inline constexpr std::size_t affix_align = 1;
template <class T>
  requires(!std::is_void_v<T>)
inline constexpr std::size_t affix_align<T> = alignof(T);
// A's alignment, read only once A is an allocator (else AffixAllocator's first static_assert has said what A must
// be, and this 1 keeps the checks that read it from adding errors of their own).
template <class A>
inline constexpr std::size_t affix_parent_alignment = 1;
template <allocator A>
inline constexpr std::size_t affix_parent_alignment<A> = A::alignment;
template <class T>
inline constexpr bool affix_trivially_destructible = std::is_void_v<T> || std::is_trivially_destructible_v<T>;
template <class T>
inline constexpr bool affix_trivially_copyable = std::is_void_v<T> || std::is_trivially_copyable_v<T>;
}  // namespace detail

/// AffixAllocator<A, Prefix, Suffix = void>
///
/// Semantics: D's AffixAllocator. Each request of n bytes asks A for the prefix, the n bytes and the suffix
/// (`sizeof(Prefix) + n`, rounded up to `alignof(Suffix)`, `+ sizeof(Suffix)`); a Prefix is value-initialized at the
/// start of that block, a Suffix at its end, and the caller gets the n bytes in between. `prefix(b)` and
/// `suffix(b)` return references to them (reference counts, locks, canaries, sizes). `deallocate` destroys both
/// before giving the block back (D never destroys them). Either affix may be void.
/// Capabilities: allocate, good_alloc_size (A's answer for the whole, less the affixes), `prefix(b)` iff Prefix is
/// not void, `suffix(b)` iff Suffix is not void; deallocate iff A has deallocate; owns iff A has owns;
/// resolve_internal_pointer iff A has it (the payload of the block found; `no` inside an affix); expand iff A has
/// expand and Suffix is void; reallocate iff A has reallocate and Suffix is void or trivially copyable (the suffix
/// moves to the new end; D leaves it behind); allocate_all iff A has allocate_all and Suffix is void;
/// deallocate_all iff A has deallocate_all and both affixes are trivially destructible; empty iff A has empty.
/// Alignment: A's when Prefix is void, else the largest power of two dividing sizeof(Prefix), at most A's (D's
/// rule). Memory space: A's (host-accessible only).
/// Parent: host-accessible; A::alignment >= alignof(Prefix); the alignment above a multiple of alignof(Suffix).
/// Thread safety: as A's (the affixes are the caller's to synchronize).
/// Failure: an empty Block for n == 0, when the size with the affixes overflows, and when A refuses.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// alloy::AffixAllocator<alloy::Mallocator, std::size_t, std::uint32_t> a;   // one word before, a canary after
/// alloy::Block b = a.allocate(11);
/// CHECK(b.size == 11);
/// CHECK(a.prefix(b) == 0);                       // value-initialized
/// a.prefix(b) = 0xCAFEBABE;
/// a.suffix(b) = 0xDEADBEEF;
/// CHECK(static_cast<std::byte*>(b.ptr) - reinterpret_cast<std::byte*>(&a.prefix(b)) == sizeof(std::size_t));
/// CHECK((a.prefix(b) == 0xCAFEBABE && a.suffix(b) == 0xDEADBEEF));
/// CHECK(a.deallocate(b));
/// static_assert(decltype(a)::alignment == 8);   // a word-sized prefix: the payload is 8-aligned
/// ```
template <class A, class Prefix, class Suffix = void>
class AffixAllocator {
  static_assert(allocator<A>,
                "AffixAllocator: A must be an alloy allocator (a type with `static constexpr std::size_t alignment` "
                "and `Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator); a std allocator, a "
                "std::pmr::memory_resource or a type whose allocate returns void* is not one");
  static constexpr std::size_t P = detail::affix_size<Prefix>;
  static constexpr std::size_t S = detail::affix_size<Suffix>;
  static constexpr std::size_t SA = detail::affix_align<Suffix>;
  static constexpr std::size_t prefix_low_bit = P & (~P + 1);
  static constexpr std::size_t PA = detail::affix_parent_alignment<A>;

 public:
  static constexpr std::size_t alignment = P == 0 ? PA : (prefix_low_bit < PA ? prefix_low_bit : PA);
  static constexpr MemorySpace memory_space = memory_space_of<A>();
  using parent_type = A;

 private:
  static_assert(host_accessible<A>,
                "AffixAllocator constructs its affixes in the memory the parent hands out, so the parent must be "
                "host-accessible; over device memory keep the per-block data on the host (e.g. alloy::StatsCollector "
                "for counters, or a host-side map keyed by the block)");
  static_assert((std::is_void_v<Prefix> || std::is_object_v<Prefix>) &&
                    (std::is_void_v<Suffix> || std::is_object_v<Suffix>),
                "AffixAllocator: Prefix and Suffix are object types or void");
  static_assert(std::is_void_v<Prefix> || (std::is_nothrow_default_constructible_v<Prefix> &&
                                           std::is_nothrow_destructible_v<Prefix>),
                "AffixAllocator: Prefix must be nothrow default-constructible and destructible (primitives are "
                "noexcept)");
  static_assert(std::is_void_v<Suffix> || (std::is_nothrow_default_constructible_v<Suffix> &&
                                           std::is_nothrow_destructible_v<Suffix>),
                "AffixAllocator: Suffix must be nothrow default-constructible and destructible (primitives are "
                "noexcept)");
  static_assert(!allocator<A> || PA >= detail::affix_align<Prefix>,
                "AffixAllocator: the parent's alignment is smaller than alignof(Prefix); use a parent with a larger "
                "alignment or a less aligned Prefix");
  static_assert(!allocator<A> || alignment % SA == 0,
                "AffixAllocator: the payload alignment is not a multiple of alignof(Suffix) (D's restriction); use "
                "a Prefix whose size is a multiple of alignof(Suffix)");

 public:
  AffixAllocator() = default;
  explicit AffixAllocator(A parent) noexcept(std::is_nothrow_move_constructible_v<A>) : parent_(std::move(parent)) {}

  /// The bytes asked of A for a payload of n; false when that overflows.
  static constexpr bool actual_size(std::size_t n, std::size_t& out) noexcept {
    std::size_t t = 0;
    if (!add_checked(n, P, t)) return false;
    if constexpr (S != 0) {
      if (!round_up_checked(t, SA, t) || !add_checked(t, S, t)) return false;
    }
    out = t;
    return true;
  }

  Block allocate(std::size_t n) noexcept {
    std::size_t m = 0;
    if (n == 0 || !actual_size(n, m)) return {};
    const Block r = parent_.allocate(m);
    if (!r) return {};
    return construct(r, n);
  }

  Block allocate_all() noexcept
    requires(has_allocate_all<A> && S == 0)
  {
    const Block r = parent_.allocate_all();
    if (!r) return {};
    if (r.size <= P) {
      alloy::deallocate(parent_, r);
      return {};
    }
    return construct(r, r.size - P);
  }

  bool deallocate(Block b) noexcept
    requires has_deallocate<A>
  {
    if (!b) return true;
    const Block r = whole(b);
    destroy(b);
    return parent_.deallocate(r);
  }

  bool deallocate_all() noexcept
    requires(has_deallocate_all<A> && detail::affix_trivially_destructible<Prefix> &&
             detail::affix_trivially_destructible<Suffix>)
  {
    return parent_.deallocate_all();
  }

  Ternary owns(Block b) noexcept
    requires has_owns<A>
  {
    if (!b) return Ternary::no;
    std::size_t m = 0;
    if (!actual_size(b.size, m) || address_of(b.ptr) < P) return Ternary::no;
    return parent_.owns(Block{static_cast<std::byte*>(b.ptr) - P, m});
  }

  Ternary resolve_internal_pointer(const void* p, Block& result) noexcept
    requires has_resolve_internal_pointer<A>
  {
    Block r{};
    const Ternary t = parent_.resolve_internal_pointer(p, r);
    if (t != Ternary::yes || !r) return t;
    if (r.size < P + S) return Ternary::no;
    const std::uintptr_t lo = address_of(r.ptr) + P;
    std::uintptr_t hi = r.end_address() - S;
    if constexpr (S != 0) hi = hi & ~std::uintptr_t(SA - 1);
    if (address_of(p) < lo || address_of(p) >= hi) return Ternary::no;  // inside an affix
    result = Block{to_pointer(lo), hi - lo};
    return Ternary::yes;
  }

  bool expand(Block& b, std::size_t delta) noexcept
    requires(has_expand<A> && S == 0)
  {
    if (delta == 0) return true;
    if (!b) return false;
    std::size_t n = 0;
    if (!add_checked(b.size, delta, n) || !actual_size(n, n)) return false;
    Block r = whole(b);
    if (!parent_.expand(r, delta)) return false;
    b.size += delta;
    return true;
  }

  bool reallocate(Block& b, std::size_t n) noexcept
    requires(has_reallocate<A> && detail::affix_trivially_copyable<Suffix>)
  {
    if (b && b.size == n) return true;
    if (bool r; detail::reallocate_ends(*this, b, n, r)) return r;
    std::size_t m = 0;
    if (!actual_size(n, m)) return false;
    Block r = whole(b);
    unsigned char saved[S == 0 ? 1 : S];
    if constexpr (S != 0) std::memcpy(saved, suffix_address(b), S);
    if (!parent_.reallocate(r, m)) return false;  // the prefix moves with the bytes
    b = Block{static_cast<std::byte*>(r.ptr) + P, n};
    if constexpr (S != 0) std::memcpy(suffix_address(b), saved, S);
    return true;
  }

  Ternary empty() noexcept
    requires has_empty<A>
  {
    return parent_.empty();
  }

  /// A's good_alloc_size for the whole block, less the affixes, at least n rounded up to `alignment`; 0 when the
  /// size overflows.
  std::size_t good_alloc_size(std::size_t n) noexcept {
    std::size_t m = 0, lower = 0;
    if (!round_up_checked(n, alignment, lower)) return 0;
    if (!actual_size(n, m)) return lower;  // with the affixes it overflows: no such block, the plain rounding
    const std::size_t g = alloy::good_alloc_size(parent_, m);
    if (g < m) return lower;
    std::size_t payload = g - S;
    if constexpr (S != 0) payload &= ~(SA - 1);
    payload = payload < P ? 0 : round_down(payload - P, alignment);
    return payload > lower ? payload : lower;
  }

  /// The Prefix of a block this allocator handed out.
  template <class T = Prefix>
    requires(!std::is_void_v<T>)
  static T& prefix(Block b) noexcept {
    ALLOY_ASSERT(b, "AffixAllocator::prefix: the empty block has no prefix");
    return *std::launder(reinterpret_cast<T*>(static_cast<std::byte*>(b.ptr) - P));
  }
  /// The Suffix of a block this allocator handed out (its size says where the suffix is).
  template <class T = Suffix>
    requires(!std::is_void_v<T>)
  static T& suffix(Block b) noexcept {
    ALLOY_ASSERT(b, "AffixAllocator::suffix: the empty block has no suffix");
    return *std::launder(reinterpret_cast<T*>(suffix_address(b)));
  }

  A& parent() noexcept { return parent_; }
  const A& parent() const noexcept { return parent_; }

 private:
  static void* suffix_address(Block b) noexcept {
    std::size_t m = 0;
    actual_size(b.size, m);
    return static_cast<std::byte*>(b.ptr) - P + m - S;
  }
  static Block whole(Block b) noexcept {
    std::size_t m = 0;
    actual_size(b.size, m);
    return Block{static_cast<std::byte*>(b.ptr) - P, m};
  }
  static Block construct(Block r, std::size_t n) noexcept {
    const Block b{static_cast<std::byte*>(r.ptr) + P, n};
    if constexpr (P != 0) ::new (r.ptr) Prefix();
    if constexpr (S != 0) ::new (suffix_address(b)) Suffix();
    return b;
  }
  static void destroy(Block b) noexcept {
    if constexpr (P != 0) detail::destroy_at(&prefix(b));
    if constexpr (S != 0) detail::destroy_at(&suffix(b));
  }

  [[no_unique_address]] A parent_{};
};

}  // namespace alloy
