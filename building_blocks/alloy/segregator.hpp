#pragma once
/// \file alloy/segregator.hpp
/// Segregator: dispatch by size between allocators (D's building_blocks/segregator.d), in its binary form
/// `Segregator<Threshold, Small, Large>` and its variadic form `Segregator<n1, A1, threshold<n2>, A2, ..., An>`.
#include <concepts>
#include <cstddef>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <boost/mp11/utility.hpp>

#include <alloy/common.hpp>
#include <alloy/detail/combinator.hpp>

namespace alloy {

/// A threshold after the first in the variadic Segregator (`Segregator<n1, A1, threshold<n2>, A2, A3>`): C++ cannot
/// mix numbers and types in one parameter pack, so every threshold after the first is spelled as a type.
/// `boost::mp11::mp_size_t<n>` is the same type.
template <std::size_t N>
using threshold = std::integral_constant<std::size_t, N>;

/// Segregator<Threshold, Small, Large>; Segregator<n1, A1, threshold<n2>, A2, ..., threshold<nk>, Ak, An>
///
/// Semantics: a request of n bytes goes to Small when n <= Threshold and to Large otherwise; a block goes back (and
/// is asked about) by its size the same way, so no lookup is needed. The variadic form sends n <= n1 to A1,
/// n1 < n <= n2 to A2, ..., and n > nk to An; it is a tree of binary Segregators split at its middle threshold (D's
/// layout: about log2(k) comparisons per call) and derives from that tree. NullAllocator fills a range that should
/// not be served. All state is the parts; nothing is written into the memory they hand out.
/// Capabilities: allocate; aligned_allocate, owns, deallocate, deallocate_all, empty and resolve_internal_pointer iff
/// both parts have them; expand iff either part has it (only within one part: b.size and b.size + delta on the same
/// side of Threshold, else false); reallocate iff either part has reallocate and the bytes can be moved (host
/// memory, or a part with copy): within one part through it, across the threshold by allocate + copy + deallocate;
/// aligned_reallocate the same, iff either part has aligned_reallocate and both have aligned_allocate;
/// good_alloc_size iff either part has it (that of the part n goes to; where that is 0, n rounded up to the
/// alignment); copy iff either part has it; stream-ordered
/// allocate and deallocate iff either part is stream-ordered and both can take blocks back;
/// `allocator_for_size<n>()` (the part, at any depth, that serves n bytes), `small()`, `large()`.
/// Alignment: the smaller of the parts'. Memory space: the parts' (they must share one; NullAllocator fits any).
/// Thread safety: that of the parts (none added).
/// Failure: an empty Block when the part for n refuses (n == 0 goes to Small, which refuses it).
/// Example:
/// ```cpp
/// #include <alloy/bitmapped_block.hpp>
/// #include <alloy/mallocator.hpp>
/// #include <alloy/region.hpp>
/// using Small = alloy::BitmappedBlock<64, 16, alloy::Mallocator>;
/// using Medium = alloy::Region<alloy::Mallocator>;
/// using A = alloy::Segregator<64, Small, alloy::threshold<1024>, Medium, alloy::Mallocator>;
/// // five arguments: Segregator<64, Small, Segregator<1024, Medium, Mallocator>> (D's tree), built from its parts
/// A a(Small(4096), alloy::Segregator<1024, Medium, alloy::Mallocator>(Medium(1 << 16), {}));
/// static_assert(std::is_base_of_v<alloy::Segregator<64, Small, alloy::Segregator<1024, Medium, alloy::Mallocator>>, A>);
/// static_assert(std::is_same_v<decltype(a.allocator_for_size<64>()), Small&>);
/// static_assert(std::is_same_v<decltype(a.allocator_for_size<65>()), Medium&>);
/// static_assert(std::is_same_v<decltype(a.allocator_for_size<1025>()), alloy::Mallocator&>);
/// alloy::Block s = a.allocate(40), m = a.allocate(700), l = a.allocate(5000);
/// CHECK(a.allocator_for_size<64>().owns(s) == alloy::Ternary::yes);
/// CHECK(a.allocator_for_size<65>().owns(m) == alloy::Ternary::yes);
/// CHECK(a.deallocate(l));
/// CHECK(a.deallocate(m));
/// CHECK(a.deallocate(s));
/// ```
template <std::size_t Threshold, class Small, class... Rest>
class Segregator;

// The binary form: every Segregator of three arguments, so that a part that is not an allocator is named by the
// static_asserts below (the variadic form builds trees of allocators only, and checks its own list).
template <std::size_t Threshold, class Small, class Large>
class Segregator<Threshold, Small, Large> {
  static_assert(allocator<Small>,
                "Segregator: Small must be an alloy allocator (a type with `static constexpr std::size_t alignment` "
                "and `Block allocate(std::size_t) noexcept`, e.g. alloy::BitmappedBlock<64> or "
                "alloy::FreeList<alloy::Mallocator, 64>); a std allocator, a std::pmr::memory_resource or a type "
                "whose allocate returns void* is not one");
  static_assert(allocator<Large>,
                "Segregator: Large must be an alloy allocator (a type with `static constexpr std::size_t alignment` "
                "and `Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator); a std allocator, a "
                "std::pmr::memory_resource or a type whose allocate returns void* is not one");
  static_assert(detail::same_memory_space<Small, Large>,
                "Segregator: Small and Large hand out memory of different memory spaces (e.g. device and host), so a "
                "block's space would depend on its size; stack parts of one memory space (NullAllocator fits any)");

 public:
  static constexpr std::size_t alignment = Small::alignment < Large::alignment ? Small::alignment : Large::alignment;
  static constexpr MemorySpace memory_space = detail::combined_memory_space<Small, Large>();
  static constexpr std::size_t threshold = Threshold;
  using small_type = Small;
  using large_type = Large;

 private:
  static constexpr bool movable = detail::reallocatable<Small> && detail::reallocatable<Large> &&
                                  (detail::copyable_memory<Small> || detail::copyable_memory<Large>);

 public:
  Segregator() noexcept(std::is_nothrow_default_constructible_v<Small> &&
                        std::is_nothrow_default_constructible_v<Large>)
    requires std::default_initializable<Small> && std::default_initializable<Large>
  = default;
  Segregator(Small s, Large l) noexcept(std::is_nothrow_move_constructible_v<Small> &&
                                        std::is_nothrow_move_constructible_v<Large>)
      : small_(std::move(s)), large_(std::move(l)) {}

  Block allocate(std::size_t n) noexcept { return n <= Threshold ? small_.allocate(n) : large_.allocate(n); }

  Block aligned_allocate(std::size_t n, std::size_t a) noexcept
    requires has_aligned_allocate<Small> && has_aligned_allocate<Large>
  {
    return n <= Threshold ? small_.aligned_allocate(n, a) : large_.aligned_allocate(n, a);
  }

  /// In place within one part only: b.size and b.size + delta must fall on the same side of Threshold.
  bool expand(Block& b, std::size_t delta) noexcept
    requires has_expand<Small> || has_expand<Large>
  {
    if (delta == 0) return true;
    if (!b) return false;
    std::size_t m = 0;
    if (!add_checked(b.size, delta, m)) return false;
    if (m <= Threshold) return expand_in(small_, b, delta);
    if (b.size > Threshold) return expand_in(large_, b, delta);
    return false;  // it would cross the threshold: the block would belong to the other part
  }

  bool reallocate(Block& b, std::size_t n) noexcept
    requires(has_reallocate<Small> || has_reallocate<Large>) && movable
  {
    if (bool r; detail::reallocate_ends_by(
            b, n, r, [this](std::size_t m) noexcept { return allocate(m); },
            [this](Block x) noexcept { return x.size <= Threshold ? drop(small_, x) : drop(large_, x); }))
      return r;
    if (b.size == n) return true;
    auto alloc = [](auto& part, std::size_t m) noexcept { return part.allocate(m); };
    return resize(b, n, alloc, [&](auto& part) noexcept { return alloy::reallocate(part, b, n); });
  }

  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) noexcept
    requires(has_aligned_reallocate<Small> || has_aligned_reallocate<Large>) && has_aligned_allocate<Small> &&
            has_aligned_allocate<Large> && movable
  {
    if (!is_power_of_two(a)) return false;
    if (bool r; detail::reallocate_ends_by(
            b, n, r, [this, a](std::size_t m) noexcept { return aligned_allocate(m, a); },
            [this](Block x) noexcept { return x.size <= Threshold ? drop(small_, x) : drop(large_, x); }))
      return r;
    if (b.size == n && is_aligned(b.ptr, a)) return true;
    auto alloc = [a](auto& part, std::size_t m) noexcept { return part.aligned_allocate(m, a); };
    return resize(b, n, alloc, [&](auto& part) noexcept { return alloy::aligned_reallocate(part, b, n, a); });
  }

  Ternary owns(Block b) noexcept
    requires has_owns<Small> && has_owns<Large>
  {
    return b.size <= Threshold ? small_.owns(b) : large_.owns(b);
  }

  Ternary resolve_internal_pointer(const void* p, Block& result) noexcept
    requires has_resolve_internal_pointer<Small> && has_resolve_internal_pointer<Large>
  {
    const Ternary r = small_.resolve_internal_pointer(p, result);
    return r == Ternary::no ? large_.resolve_internal_pointer(p, result) : r;
  }

  bool deallocate(Block b) noexcept
    requires has_deallocate<Small> && has_deallocate<Large>
  {
    if (!b) return true;
    return b.size <= Threshold ? small_.deallocate(b) : large_.deallocate(b);
  }

  bool deallocate_all() noexcept
    requires has_deallocate_all<Small> && has_deallocate_all<Large>
  {
    const bool s = small_.deallocate_all();
    const bool l = large_.deallocate_all();
    return s && l;
  }

  Ternary empty() noexcept
    requires has_empty<Small> && has_empty<Large>
  {
    return small_.empty() & large_.empty();
  }

  std::size_t good_alloc_size(std::size_t n) noexcept
    requires has_good_alloc_size<Small> || has_good_alloc_size<Large>
  {
    if (const std::size_t g = n <= Threshold ? alloy::good_alloc_size(small_, n) : alloy::good_alloc_size(large_, n))
      return g;
    std::size_t r = 0;  // the part's rounding overflows (or passes PTRDIFF_MAX) where this one's may not
    return round_up_checked(n, alignment, r) ? r : 0;
  }

  bool copy(void* dst, const void* src, std::size_t n, stream_view s) noexcept
    requires has_copy<Small> || has_copy<Large>
  {
    if constexpr (has_copy<Small>) return small_.copy(dst, src, n, s);
    else return large_.copy(dst, src, n, s);
  }

  Block allocate(stream_view s, std::size_t n) noexcept
    requires(has_stream_ordered<Small> || has_stream_ordered<Large>) && detail::stream_deallocatable<Small> &&
            detail::stream_deallocatable<Large>
  {
    return n <= Threshold ? detail::allocate_on(small_, s, n) : detail::allocate_on(large_, s, n);
  }
  bool deallocate(stream_view s, Block b) noexcept
    requires(has_stream_ordered<Small> || has_stream_ordered<Large>) && detail::stream_deallocatable<Small> &&
            detail::stream_deallocatable<Large>
  {
    if (!b) return true;
    return b.size <= Threshold ? detail::deallocate_on(small_, s, b) : detail::deallocate_on(large_, s, b);
  }

  /// The part that serves requests of S bytes, looked up through nested Segregators (D's allocatorForSize).
  template <std::size_t S>
  auto& allocator_for_size() noexcept {
    if constexpr (S <= Threshold) {
      if constexpr (requires { small_.template allocator_for_size<S>(); }) return small_.template allocator_for_size<S>();
      else return small_;
    } else {
      if constexpr (requires { large_.template allocator_for_size<S>(); }) return large_.template allocator_for_size<S>();
      else return large_;
    }
  }

  Small& small() noexcept { return small_; }
  const Small& small() const noexcept { return small_; }
  Large& large() noexcept { return large_; }
  const Large& large() const noexcept { return large_; }

 private:
  template <class Part>
  static bool expand_in(Part& part, Block& b, std::size_t delta) noexcept {
    if constexpr (has_expand<Part>) return part.expand(b, delta);
    else return (void)part, (void)b, (void)delta, false;
  }
  // reallocate(b, 0): a part without deallocate drops the block (the generic reallocate's rule, as D).
  template <class Part>
  static bool drop(Part& part, Block b) noexcept {
    if constexpr (has_deallocate<Part>) return part.deallocate(b);
    else return (void)part, (void)b, true;
  }
  // Both sizes on one side: that part's (aligned_)reallocate; across: a block from the other part, copy, give back.
  template <class Alloc, class Within>
  bool resize(Block& b, std::size_t n, Alloc&& alloc, Within&& within) noexcept {
    auto copy = [this](void* d, const void* s, std::size_t m) noexcept {
      return detail::copy_within(d, s, m, small_, large_);
    };
    if (b.size <= Threshold) {
      if (n <= Threshold) return within(small_);
      return detail::move_block(small_, large_, b, n, alloc, copy);
    }
    if (n > Threshold) return within(large_);
    return detail::move_block(large_, small_, b, n, alloc, copy);
  }

  [[no_unique_address]] Small small_{};
  [[no_unique_address]] Large large_{};
};

namespace detail {

template <class T>
inline constexpr bool is_threshold = false;
template <std::size_t N>
inline constexpr bool is_threshold<std::integral_constant<std::size_t, N>> = true;

// L = mp_list<threshold<n1>, A1, threshold<n2>, A2, ..., An>: alternating thresholds and allocators, one more
// allocator at the end.
template <class L>
constexpr bool segregator_shape() noexcept {
  constexpr std::size_t size = boost::mp11::mp_size<L>::value;
  if (size < 3 || size % 2 == 0) return false;
  bool ok = true;
  boost::mp11::mp_for_each<boost::mp11::mp_iota_c<size>>([&](auto i) {
    using T = boost::mp11::mp_at_c<L, decltype(i)::value>;
    if (decltype(i)::value % 2 == 0 && decltype(i)::value + 1 < size) ok = ok && is_threshold<T>;
    else ok = ok && allocator<T>;
  });
  return ok;
}

template <class L>
constexpr bool segregator_increasing() noexcept {
  constexpr std::size_t size = boost::mp11::mp_size<L>::value;
  bool ok = true;
  std::size_t last = 0;
  boost::mp11::mp_for_each<boost::mp11::mp_iota_c<size / 2>>([&](auto k) {
    using T = boost::mp11::mp_at_c<L, 2 * decltype(k)::value>;
    if constexpr (is_threshold<T>) {
      if (decltype(k)::value > 0 && T::value <= last) ok = false;
      last = T::value;
    }
  });
  return ok;
}

// D's tree over L (2k + 1 elements): split at the threshold in the middle (an even index, `cut`), or, for five
// elements (cut == 0), at the first threshold, favouring small sizes.
template <class L, std::size_t Size = boost::mp11::mp_size<L>::value, bool Split = (((Size - 2) / 4) * 2 >= 2)>
struct segregator_build;
template <class L>
using segregator_build_t = typename segregator_build<L>::type;
template <class L>
struct segregator_build<L, 3, false> {
  using type = Segregator<boost::mp11::mp_at_c<L, 0>::value, boost::mp11::mp_at_c<L, 1>, boost::mp11::mp_at_c<L, 2>>;
};
template <class L, std::size_t Size>
struct segregator_build<L, Size, false> {
  using type = Segregator<boost::mp11::mp_at_c<L, 0>::value, boost::mp11::mp_at_c<L, 1>,
                          segregator_build_t<boost::mp11::mp_drop_c<L, 2>>>;
};
template <class L, std::size_t Size>
struct segregator_build<L, Size, true> {
  static constexpr std::size_t cut = ((Size - 2) / 4) * 2;
  using type = Segregator<
      boost::mp11::mp_at_c<L, cut>::value,
      segregator_build_t<boost::mp11::mp_push_back<boost::mp11::mp_take_c<L, cut>, boost::mp11::mp_at_c<L, cut + 1>>>,
      segregator_build_t<boost::mp11::mp_drop_c<L, cut + 2>>>;
};

// A malformed list gives an empty base, so that the static_asserts of Segregator say what is wrong.
struct InvalidSegregator {};
template <class L>
using segregator_tree_t = boost::mp11::mp_eval_if_c<!(segregator_shape<L>() && segregator_increasing<L>()),
                                                    InvalidSegregator, segregator_build_t, L>;

}  // namespace detail

template <std::size_t Threshold, class Small, class... Rest>
class Segregator : public detail::segregator_tree_t<boost::mp11::mp_list<alloy::threshold<Threshold>, Small, Rest...>> {
  using L = boost::mp11::mp_list<alloy::threshold<Threshold>, Small, Rest...>;
  static_assert(detail::segregator_shape<L>(),
                "Segregator: write Segregator<Threshold, Small, Large> or Segregator<n1, A1, alloy::threshold<n2>, A2, "
                "..., An>: thresholds after the first as alloy::threshold<n>, each followed by an alloy allocator, and "
                "one allocator last");
  static_assert(detail::segregator_increasing<L>(),
                "Segregator: the thresholds must increase strictly (n1 < n2 < ... < nk): each allocator serves the "
                "sizes above the threshold before it, up to its own");

 public:
  /// The tree of binary Segregators this one is.
  using tree_type = detail::segregator_tree_t<L>;
  using tree_type::tree_type;
};

}  // namespace alloy
