#pragma once
/// \file alloy/fallback_allocator.hpp
/// FallbackAllocator: the allocator "or" (D's building_blocks/fallback_allocator.d).
#include <concepts>
#include <cstddef>
#include <utility>

#include <alloy/common.hpp>
#include <alloy/detail/combinator.hpp>

namespace alloy {

/// FallbackAllocator<Primary, Fallback>
///
/// Semantics: every request goes to Primary first and, when Primary answers with an empty Block, to Fallback. A block
/// is routed back to its owner by `Primary::owns`: `yes` means Primary's, anything else Fallback's (D's rule). Typical
/// use: a fast, bounded allocator (a Region, a BitmappedBlock) backed by a general-purpose one. All state is the two
/// parts; nothing is written into the memory they hand out.
/// Capabilities: allocate; aligned_allocate iff either part has it (Primary's first, then Fallback's; a part without
/// it serves alignments up to its own through allocate); expand iff
/// Primary has owns and either part has expand (the owner expands; false where it cannot); deallocate iff Primary has
/// owns and either part has deallocate (false where the owner cannot); reallocate iff Primary has owns and the bytes
/// can be moved (host memory, or a part with copy): the owner's reallocate first, else a move to the other part;
/// aligned_reallocate iff, besides, either part has aligned_allocate; owns, resolve_internal_pointer, deallocate_all
/// and empty iff both parts have them (`primary | fallback`, `primary & fallback`); good_alloc_size iff either part
/// has it (Primary's hint, which the request meets first); copy iff either part has it; stream-ordered allocate and
/// deallocate iff either part is stream-ordered and deallocate exists (a part without them gets the plain call);
/// `primary()`, `fallback()`.
/// Alignment: the smaller of the two. Memory space: the parts' (they must share one; NullAllocator fits any).
/// Thread safety: that of the parts (none added).
/// Failure: an empty Block when both parts refuse.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// #include <alloy/region.hpp>
/// alignas(16) static std::byte buf[1024];
/// alloy::FallbackAllocator<alloy::Region<>, alloy::Mallocator> a{alloy::Region<>(std::span<std::byte>(buf))};
/// alloy::Block small = a.allocate(1000);              // fits the region
/// alloy::Block big = a.allocate(4096);                // does not: malloc
/// CHECK(a.primary().owns(small) == alloy::Ternary::yes);
/// CHECK(a.primary().owns(big) == alloy::Ternary::no);
/// CHECK(a.reallocate(small, 2000));                   // moved out of the region into malloc'd memory
/// CHECK(a.primary().owns(small) == alloy::Ternary::no);
/// CHECK(a.deallocate(small));
/// CHECK(a.deallocate(big));
/// CHECK(a.primary().empty() == alloy::Ternary::yes);
/// ```
template <class Primary, class Fallback>
class FallbackAllocator {
  static_assert(allocator<Primary>,
                "FallbackAllocator: Primary must be an alloy allocator (a type with `static constexpr std::size_t "
                "alignment` and `Block allocate(std::size_t) noexcept`, e.g. alloy::Region<> or "
                "alloy::BitmappedBlock<64>); a std allocator, a std::pmr::memory_resource or a type whose allocate "
                "returns void* is not one");
  static_assert(allocator<Fallback>,
                "FallbackAllocator: Fallback must be an alloy allocator (a type with `static constexpr std::size_t "
                "alignment` and `Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator); a std allocator, a "
                "std::pmr::memory_resource or a type whose allocate returns void* is not one");
  static_assert(detail::same_memory_space<Primary, Fallback>,
                "FallbackAllocator: Primary and Fallback hand out memory of different memory spaces (e.g. device and "
                "host), so a block's space would depend on which part served it; stack parts of one memory space "
                "(NullAllocator fits any)");

 public:
  static constexpr std::size_t alignment = Primary::alignment < Fallback::alignment ? Primary::alignment : Fallback::alignment;
  static constexpr MemorySpace memory_space = detail::combined_memory_space<Primary, Fallback>();
  using primary_type = Primary;
  using fallback_type = Fallback;

 private:
  static constexpr bool routes = has_owns<Primary>;
  static constexpr bool movable = detail::reallocatable<Primary> && detail::reallocatable<Fallback> &&
                                  (detail::copyable_memory<Primary> || detail::copyable_memory<Fallback>);

 public:
  FallbackAllocator() noexcept(std::is_nothrow_default_constructible_v<Primary> &&
                               std::is_nothrow_default_constructible_v<Fallback>)
    requires std::default_initializable<Primary> && std::default_initializable<Fallback>
  = default;
  explicit FallbackAllocator(Primary p) noexcept(std::is_nothrow_move_constructible_v<Primary>)
    requires std::default_initializable<Fallback>
      : primary_(std::move(p)) {}
  FallbackAllocator(Primary p, Fallback f) noexcept(std::is_nothrow_move_constructible_v<Primary> &&
                                                    std::is_nothrow_move_constructible_v<Fallback>)
      : primary_(std::move(p)), fallback_(std::move(f)) {}

  Block allocate(std::size_t n) noexcept {
    if (const Block b = primary_.allocate(n)) return b;
    return fallback_.allocate(n);
  }

  Block aligned_allocate(std::size_t n, std::size_t a) noexcept
    requires has_aligned_allocate<Primary> || has_aligned_allocate<Fallback>
  {
    if (const Block b = aligned_in(primary_, n, a)) return b;
    return aligned_in(fallback_, n, a);
  }

  bool expand(Block& b, std::size_t delta) noexcept
    requires routes && (has_expand<Primary> || has_expand<Fallback>)
  {
    if (delta == 0) return true;
    if (!b) return false;
    if (in_primary(b)) return expand_in(primary_, b, delta);
    return expand_in(fallback_, b, delta);
  }

  /// The owner's reallocate (alloy::reallocate: its own, or expand, or a move inside it) first; else a new block from
  /// the other part, a copy, and the old block given back to its owner. n == 0 frees; an empty `b` allocates.
  bool reallocate(Block& b, std::size_t n) noexcept
    requires routes && movable
  {
    if (bool r; detail::reallocate_ends_by(
            b, n, r, [this](std::size_t m) noexcept { return allocate(m); },
            [this](Block x) noexcept { return give_back_dropping(x); }))
      return r;
    if (b.size == n) return true;
    auto alloc = [](auto& part, std::size_t m) noexcept { return part.allocate(m); };
    auto copy = [this](void* d, const void* s, std::size_t m) noexcept { return copy_bytes(d, s, m); };
    if (in_primary(b)) return alloy::reallocate(primary_, b, n) || detail::move_block(primary_, fallback_, b, n, alloc, copy);
    return alloy::reallocate(fallback_, b, n) || detail::move_block(fallback_, primary_, b, n, alloc, copy);
  }

  /// As reallocate, keeping alignment `a`: within the owner when it has aligned_allocate, else (or when that fails)
  /// into the other part when it has aligned_allocate.
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) noexcept
    requires routes && movable && (has_aligned_allocate<Primary> || has_aligned_allocate<Fallback>)
  {
    if (!is_power_of_two(a)) return false;
    if (bool r; detail::reallocate_ends_by(
            b, n, r, [this, a](std::size_t m) noexcept { return aligned_allocate(m, a); },
            [this](Block x) noexcept { return give_back_dropping(x); }))
      return r;
    if (b.size == n && is_aligned(b.ptr, a)) return true;
    auto alloc = [a](auto& part, std::size_t m) noexcept { return aligned_in(part, m, a); };
    auto copy = [this](void* d, const void* s, std::size_t m) noexcept { return copy_bytes(d, s, m); };
    auto within = [&b, n, a](auto& part) noexcept {
      if constexpr (has_aligned_allocate<std::remove_cvref_t<decltype(part)>>)
        return alloy::aligned_reallocate(part, b, n, a);
      else return (void)part, false;
    };
    if (in_primary(b)) return within(primary_) || detail::move_block(primary_, fallback_, b, n, alloc, copy);
    return within(fallback_) || detail::move_block(fallback_, primary_, b, n, alloc, copy);
  }

  Ternary owns(Block b) noexcept
    requires has_owns<Primary> && has_owns<Fallback>
  {
    return primary_.owns(b) | fallback_.owns(b);
  }

  Ternary resolve_internal_pointer(const void* p, Block& result) noexcept
    requires has_resolve_internal_pointer<Primary> && has_resolve_internal_pointer<Fallback>
  {
    const Ternary r = primary_.resolve_internal_pointer(p, result);
    return r == Ternary::no ? fallback_.resolve_internal_pointer(p, result) : r;
  }

  bool deallocate(Block b) noexcept
    requires routes && (has_deallocate<Primary> || has_deallocate<Fallback>)
  {
    if (!b) return true;
    if (in_primary(b)) return give_back(primary_, b);
    return give_back(fallback_, b);
  }

  bool deallocate_all() noexcept
    requires has_deallocate_all<Primary> && has_deallocate_all<Fallback>
  {
    const bool p = primary_.deallocate_all();
    const bool f = fallback_.deallocate_all();
    return p && f;
  }

  Ternary empty() noexcept
    requires has_empty<Primary> && has_empty<Fallback>
  {
    return primary_.empty() & fallback_.empty();
  }

  /// Primary's hint (a request meets Primary first); Fallback's where Primary's is 0; else n rounded up to the alignment.
  std::size_t good_alloc_size(std::size_t n) noexcept
    requires has_good_alloc_size<Primary> || has_good_alloc_size<Fallback>
  {
    if (const std::size_t g = alloy::good_alloc_size(primary_, n)) return g;
    if (const std::size_t g = alloy::good_alloc_size(fallback_, n)) return g;
    std::size_t r = 0;  // both parts' roundings overflow (or pass PTRDIFF_MAX) where this one's may not
    return round_up_checked(n, alignment, r) ? r : 0;
  }

  bool copy(void* dst, const void* src, std::size_t n, stream_view s) noexcept
    requires has_copy<Primary> || has_copy<Fallback>
  {
    if constexpr (has_copy<Primary>) return primary_.copy(dst, src, n, s);
    else return fallback_.copy(dst, src, n, s);
  }

  Block allocate(stream_view s, std::size_t n) noexcept
    requires(has_stream_ordered<Primary> || has_stream_ordered<Fallback>) && routes &&
            (has_deallocate<Primary> || has_deallocate<Fallback>)
  {
    if (const Block b = detail::allocate_on(primary_, s, n)) return b;
    return detail::allocate_on(fallback_, s, n);
  }
  bool deallocate(stream_view s, Block b) noexcept
    requires(has_stream_ordered<Primary> || has_stream_ordered<Fallback>) && routes &&
            (has_deallocate<Primary> || has_deallocate<Fallback>)
  {
    if (!b) return true;
    if (in_primary(b)) return detail::deallocate_on(primary_, s, b);
    return detail::deallocate_on(fallback_, s, b);
  }

  Primary& primary() noexcept { return primary_; }
  const Primary& primary() const noexcept { return primary_; }
  Fallback& fallback() noexcept { return fallback_; }
  const Fallback& fallback() const noexcept { return fallback_; }

 private:
  bool in_primary(Block b) noexcept { return primary_.owns(b) == Ternary::yes; }

  // A part's aligned_allocate; a part without one serves alignments up to its own through allocate.
  template <class Part>
  static Block aligned_in(Part& part, std::size_t n, std::size_t a) noexcept {
    if constexpr (has_aligned_allocate<Part>) return part.aligned_allocate(n, a);
    else return is_power_of_two(a) && a <= Part::alignment ? part.allocate(n) : Block{};
  }

  template <class Part>
  static bool expand_in(Part& part, Block& b, std::size_t delta) noexcept {
    if constexpr (has_expand<Part>) return part.expand(b, delta);
    else return (void)part, (void)b, false;
  }
  template <class Part>
  static bool give_back(Part& part, Block b) noexcept {
    if constexpr (has_deallocate<Part>) return part.deallocate(b);
    else return (void)part, (void)b, false;
  }
  // reallocate(b, 0): a part without deallocate drops the block (the generic reallocate's rule, as D).
  bool give_back_dropping(Block b) noexcept {
    if (in_primary(b)) {
      if constexpr (has_deallocate<Primary>) return primary_.deallocate(b);
      else return true;
    }
    if constexpr (has_deallocate<Fallback>) return fallback_.deallocate(b);
    else return true;
  }
  bool copy_bytes(void* dst, const void* src, std::size_t n) noexcept {
    return detail::copy_within(dst, src, n, primary_, fallback_);
  }

  [[no_unique_address]] Primary primary_{};
  [[no_unique_address]] Fallback fallback_{};
};

}  // namespace alloy
