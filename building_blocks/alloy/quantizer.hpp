#pragma once
/// \file alloy/quantizer.hpp
/// Quantizer: rounds request sizes up to a small set of sizes (D's building_blocks/quantizer.d), and the roundings
/// it is usually given.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <alloy/common.hpp>
#include <alloy/detail/combinator.hpp>

namespace alloy {

/// A Quantizer rounding: n rounded up to a multiple of M (any M > 0); 0 when that overflows.
template <std::size_t M>
struct RoundUpToMultipleOf {
  static_assert(M > 0, "RoundUpToMultipleOf: M must be positive");
  constexpr std::size_t operator()(std::size_t n) const noexcept {
    std::size_t r = 0;
    return round_up_to_multiple_checked(n, M, r) ? r : 0;
  }
};

/// A Quantizer rounding: n rounded up to a power of two (0 stays 0); 0 above the largest power of two.
struct RoundUpToPowerOfTwo {
  constexpr std::size_t operator()(std::size_t n) const noexcept {
    if (n <= 1) return n;
    if (n > (SIZE_MAX >> 1) + 1) return 0;
    return std::size_t{1} << (64 - __builtin_clzll(static_cast<unsigned long long>(n - 1)));
  }
};

namespace detail {
inline constexpr std::size_t rounding_samples[] = {
    1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 96, 100, 127, 128, 129, 255, 256, 257, 500,
    511, 512, 513, 1000, 1023, 1024, 1025, 4095, 4096, 4097, 16383, 16384, 16385, 65535, 65536, 65537, 1000000,
    (std::size_t{1} << 20) + 1, std::size_t{1} << 30, (std::size_t{1} << 40) + 3, SIZE_MAX / 2, SIZE_MAX - 1, SIZE_MAX};

/// The rounding can be evaluated at compile time (a default-constructible type with a constexpr call operator).
template <class R>
concept constexpr_rounding = std::default_initializable<R> &&
                             requires { typename std::integral_constant<std::size_t, R{}(std::size_t{1})>; };

/// On the sample sizes: R(n) >= n, or 0 (n cannot be rounded). True when R cannot be evaluated at compile time.
template <class R>
constexpr bool rounding_never_shrinks() noexcept {
  if constexpr (constexpr_rounding<R>) {
    for (const std::size_t n : rounding_samples)
      if (const std::size_t r = R{}(n); r != 0 && r < n) return false;
  }
  return true;
}
/// On the sample sizes, in increasing order: the non-zero answers never decrease (D's precondition).
template <class R>
constexpr bool rounding_monotonic() noexcept {
  if constexpr (constexpr_rounding<R>) {
    std::size_t last = 0;
    for (const std::size_t n : rounding_samples) {
      const std::size_t r = R{}(n);
      if (r == 0) continue;
      if (r < last) return false;
      last = r;
    }
  }
  return true;
}
}  // namespace detail

/// Quantizer<Parent, Rounding>
///
/// Semantics: a request of n bytes asks Parent for `Rounding(n)` bytes (the quantum) and returns n of them; a block
/// goes back to Parent with its quantum. Resizing within one quantum happens in place, without Parent, so code that
/// grows arrays reallocates cheaply, and allocators that prefer few sizes (free lists) see only the quanta.
/// Rounding is a class type with `std::size_t operator()(std::size_t n) const` (stored in the Quantizer; a stateless
/// one costs nothing): `RoundUpToMultipleOf<M>`, `RoundUpToPowerOfTwo`, or your own. It must return at least n and
/// never decrease (D's preconditions), or 0 where n cannot be rounded (that request fails); when it is constexpr and
/// default-constructible, both are checked at compile time on sample sizes, otherwise at run time by ALLOY_ASSERT.
/// Nothing is written into the memory handed out.
/// Capabilities: allocate; expand (in place within the quantum; beyond it iff Parent has expand, by the quanta's
/// difference); good_alloc_size (Parent's good_alloc_size of the quantum: what the request really reserves);
/// reallocate iff Parent has reallocate or its memory is host-accessible or it has copy (in place within the quantum,
/// else alloy::reallocate on Parent with the quanta); aligned_allocate iff Parent has it (the alignment is passed
/// on); aligned_reallocate iff Parent has aligned_allocate and reallocate's condition holds; owns, deallocate (with
/// the quantum), deallocate_all, empty, resolve_internal_pointer, copy and stream-ordered allocate/deallocate iff
/// Parent has them; `parent()`, `quantum(n)`.
/// Alignment and memory space: Parent's.
/// Thread safety: that of Parent (none added).
/// Failure: an empty Block for n == 0, when Rounding answers 0 (or, breaking its contract, less than n), and when
/// Parent refuses the quantum.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// alloy::Quantizer<alloy::Mallocator, alloy::RoundUpToMultipleOf<256>> q;
/// CHECK(q.good_alloc_size(10) == 256);
/// alloy::Block b = q.allocate(10);                       // malloc(256)
/// CHECK(b.size == 10);
/// const void* p = b.ptr;
/// CHECK(q.expand(b, 200));                              // in place: still the 256-byte quantum
/// CHECK(q.reallocate(b, 256));
/// CHECK(b.ptr == p);
/// CHECK(q.reallocate(b, 1000));                          // a new quantum: realloc(1024)
/// CHECK(b.size == 1000);
/// CHECK(q.deallocate(b));
/// ```
template <class Parent, class Rounding>
class Quantizer {
  static_assert(allocator<Parent>,
                "Quantizer: Parent must be an alloy allocator (a type with `static constexpr std::size_t alignment` "
                "and `Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator); a std allocator, a "
                "std::pmr::memory_resource or a type whose allocate returns void* is not one");
  static_assert(std::is_class_v<Rounding> && std::is_invocable_r_v<std::size_t, const Rounding&, std::size_t>,
                "Quantizer: Rounding must be a class type with `std::size_t operator()(std::size_t n) const`, e.g. "
                "alloy::RoundUpToMultipleOf<64> (a lambda's type works too)");
  static_assert(detail::rounding_never_shrinks<Rounding>(),
                "Quantizer: Rounding shrinks a size (Rounding(n) < n for a sample n): it must return at least n, or 0 "
                "where n cannot be rounded");
  static_assert(detail::rounding_monotonic<Rounding>(),
                "Quantizer: Rounding must never decrease (Rounding(n1) <= Rounding(n2) for n1 < n2, D's precondition)");

 public:
  static constexpr std::size_t alignment = Parent::alignment;
  static constexpr MemorySpace memory_space = memory_space_of<Parent>();
  using parent_type = Parent;
  using rounding_type = Rounding;

  Quantizer() noexcept(std::is_nothrow_default_constructible_v<Parent> &&
                       std::is_nothrow_default_constructible_v<Rounding>)
    requires std::default_initializable<Parent> && std::default_initializable<Rounding>
  = default;
  explicit Quantizer(Parent p) noexcept(std::is_nothrow_move_constructible_v<Parent>)
    requires std::default_initializable<Rounding>
      : parent_(std::move(p)) {}
  Quantizer(Parent p, Rounding r) noexcept(std::is_nothrow_move_constructible_v<Parent> &&
                                           std::is_nothrow_move_constructible_v<Rounding>)
      : parent_(std::move(p)), rounding_(std::move(r)) {}

  /// The size asked of Parent for a request of n bytes: Rounding(n); 0 for n == 0 or where n cannot be rounded.
  std::size_t quantum(std::size_t n) const noexcept {
    if (n == 0) return 0;
    const std::size_t r = rounding_(n);
    ALLOY_ASSERT(r == 0 || r >= n, "Quantizer: Rounding(n) < n: the rounding must never shrink a size");
    return r >= n ? r : 0;
  }

  /// Parent's good_alloc_size of the quantum; where n cannot be rounded, n rounded up to the alignment (0 when that
  /// overflows).
  std::size_t good_alloc_size(std::size_t n) noexcept {
    if (const std::size_t q = quantum(n))
      if (const std::size_t g = alloy::good_alloc_size(parent_, q)) return g;
    std::size_t r = 0;
    return round_up_checked(n, alignment, r) ? r : 0;
  }

  Block allocate(std::size_t n) noexcept {
    const std::size_t q = quantum(n);
    if (q == 0) return {};
    const Block b = parent_.allocate(q);
    return b ? Block{b.ptr, n} : Block{};
  }

  Block aligned_allocate(std::size_t n, std::size_t a) noexcept
    requires has_aligned_allocate<Parent>
  {
    const std::size_t q = quantum(n);
    if (q == 0) return {};
    const Block b = parent_.aligned_allocate(q, a);
    return b ? Block{b.ptr, n} : Block{};
  }

  /// In place within b's quantum; beyond it through Parent's expand (by the difference of the quanta) when it has one.
  bool expand(Block& b, std::size_t delta) noexcept {
    if (delta == 0) return true;
    if (!b) return false;
    std::size_t m = 0;
    if (!add_checked(b.size, delta, m)) return false;
    const std::size_t q0 = quantum(b.size), q1 = quantum(m);
    if (q1 == 0) return false;
    if (q1 == q0) {
      b.size = m;
      return true;
    }
    if constexpr (has_expand<Parent>) {
      Block whole{b.ptr, q0};
      if (!parent_.expand(whole, q1 - q0)) return false;
      b.size = m;
      return true;
    } else {
      return false;
    }
  }

  /// In place when n has b's quantum (or expand succeeds); else alloy::reallocate on Parent from quantum to quantum.
  bool reallocate(Block& b, std::size_t n) noexcept
    requires detail::reallocatable<Parent>
  {
    if (bool r; detail::reallocate_ends_by(
            b, n, r, [this](std::size_t m) noexcept { return allocate(m); },
            [this](Block x) noexcept { return drop(x); }))
      return r;
    if (b.size == n) return true;
    if (n > b.size && expand(b, n - b.size)) return true;
    const std::size_t q0 = quantum(b.size), q1 = quantum(n);
    if (q1 == 0) return false;
    if (q1 == q0) {
      b.size = n;
      return true;
    }
    Block whole{b.ptr, q0};
    if (!alloy::reallocate(parent_, whole, q1)) return false;
    b = Block{whole.ptr, n};
    return true;
  }

  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) noexcept
    requires has_aligned_allocate<Parent> && detail::reallocatable<Parent>
  {
    if (!is_power_of_two(a)) return false;
    if (bool r; detail::reallocate_ends_by(
            b, n, r, [this, a](std::size_t m) noexcept { return aligned_allocate(m, a); },
            [this](Block x) noexcept { return drop(x); }))
      return r;
    const std::size_t q0 = quantum(b.size), q1 = quantum(n);
    if (q1 == 0) return false;
    if (is_aligned(b.ptr, a)) {
      if (q1 == q0) {
        b.size = n;
        return true;
      }
      if (n > b.size && expand(b, n - b.size)) return true;
    }
    Block whole{b.ptr, q0};
    if (!alloy::aligned_reallocate(parent_, whole, q1, a)) return false;
    b = Block{whole.ptr, n};
    return true;
  }

  Ternary owns(Block b) noexcept
    requires has_owns<Parent>
  {
    if (!b) return Ternary::no;
    const std::size_t q = quantum(b.size);
    return parent_.owns(Block{b.ptr, q ? q : b.size});
  }

  Ternary resolve_internal_pointer(const void* p, Block& result) noexcept
    requires has_resolve_internal_pointer<Parent>
  {
    return parent_.resolve_internal_pointer(p, result);
  }

  bool deallocate(Block b) noexcept
    requires has_deallocate<Parent>
  {
    if (!b) return true;
    return parent_.deallocate(Block{b.ptr, quantum(b.size)});
  }

  bool deallocate_all() noexcept
    requires has_deallocate_all<Parent>
  {
    return parent_.deallocate_all();
  }

  Ternary empty() noexcept
    requires has_empty<Parent>
  {
    return parent_.empty();
  }

  bool copy(void* dst, const void* src, std::size_t n, stream_view s) noexcept
    requires has_copy<Parent>
  {
    return parent_.copy(dst, src, n, s);
  }

  Block allocate(stream_view s, std::size_t n) noexcept
    requires has_stream_ordered<Parent>
  {
    const std::size_t q = quantum(n);
    if (q == 0) return {};
    const Block b = parent_.allocate(s, q);
    return b ? Block{b.ptr, n} : Block{};
  }
  bool deallocate(stream_view s, Block b) noexcept
    requires has_stream_ordered<Parent>
  {
    if (!b) return true;
    return parent_.deallocate(s, Block{b.ptr, quantum(b.size)});
  }

  Parent& parent() noexcept { return parent_; }
  const Parent& parent() const noexcept { return parent_; }

 private:
  // reallocate(b, 0): without deallocate the block is dropped (the generic reallocate's rule, as D).
  bool drop(Block b) noexcept {
    if constexpr (has_deallocate<Parent>) return parent_.deallocate(Block{b.ptr, quantum(b.size)});
    else return (void)b, true;
  }

  [[no_unique_address]] Parent parent_{};
  [[no_unique_address]] Rounding rounding_{};
};

}  // namespace alloy
