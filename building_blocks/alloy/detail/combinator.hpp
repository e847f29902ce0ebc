#pragma once
/// \file alloy/detail/combinator.hpp
/// What the combinators (FallbackAllocator, Segregator, Bucketizer, Quantizer) share: the memory space of a stack of
/// several parts, the stream-ordered calls on a part that may lack them, and moving bytes between parts.
#include <cstddef>
#include <cstring>
#include <type_traits>

#include <alloy/common.hpp>
#include <alloy/null_allocator.hpp>

namespace alloy::detail {

/// A NullAllocator part never hands out memory, so it fits a stack of any memory space.
template <class A>
inline constexpr bool is_null_allocator = std::is_same_v<std::remove_cv_t<A>, NullAllocator>;

/// The memory space of a stack over `Parts`: that of its first part that is not NullAllocator (host if all are).
template <class... Parts>
constexpr MemorySpace combined_memory_space() noexcept {
  MemorySpace s = MemorySpace::host;
  bool found = false;
  ((!found && !is_null_allocator<Parts> ? (s = memory_space_of<Parts>(), found = true) : false), ...);
  return s;
}

/// Every part that is not NullAllocator hands out memory of one memory space.
template <class... Parts>
inline constexpr bool same_memory_space =
    ((is_null_allocator<Parts> || memory_space_of<Parts>() == combined_memory_space<Parts...>()) && ...);

/// The host may move bytes of A's memory: it is host-accessible, or A has `copy`.
template <class A>
concept copyable_memory = host_accessible<A> || has_copy<A>;

/// `alloy::reallocate(a, ...)` compiles for A: A has reallocate, or the generic path can copy its bytes.
template <class A>
concept reallocatable = has_reallocate<A> || copyable_memory<A>;

/// A part that can take a block back on a stream: it is stream-ordered, or it has plain deallocate.
template <class A>
concept stream_deallocatable = has_stream_ordered<A> || has_deallocate<A>;

/// allocate on stream s: the part's stream-ordered primitive when it has one, else the plain one (DESIGN 7: callers
/// use the stream-ordered primitives when present).
template <allocator A>
Block allocate_on(A& a, stream_view s, std::size_t n) noexcept {
  if constexpr (has_stream_ordered<A>) return a.allocate(s, n);
  else return (void)s, a.allocate(n);
}

/// deallocate on stream s, as allocate_on; false for a part that cannot take blocks back (the empty block: true).
template <allocator A>
bool deallocate_on(A& a, stream_view s, Block b) noexcept {
  if constexpr (has_stream_ordered<A>) return a.deallocate(s, b);
  else if constexpr (has_deallocate<A>) return (void)s, a.deallocate(b);
  else return (void)a, (void)s, !b;
}

/// Copies n bytes within the one memory space of `parts`: the first part's `copy` that exists, else memmove (the
/// space is host-accessible). Callers require that one of the two holds (`copyable_memory` of some part).
template <class... Parts>
bool copy_within(void* dst, const void* src, std::size_t n, Parts&... parts) noexcept {
  if (n == 0) return true;
  if constexpr ((has_copy<Parts> || ...)) {
    bool done = false, ok = false;
    (
        [&](auto& p) {
          if constexpr (has_copy<std::remove_cvref_t<decltype(p)>>)
            if (!done) done = true, ok = p.copy(dst, src, n, stream_view{});
        }(parts),
        ...);
    return ok;
  } else {
    static_assert(combined_memory_space<Parts...>() != MemorySpace::device,
                  "alloy: moving a block between parts in device memory needs a part with a copy primitive");
    ((void)parts, ...);
    std::memmove(dst, src, n);
    return true;
  }
}

/// Moves b into a new block of n bytes from `to` (made by `alloc`), copying through `copy`, and gives b back to
/// `from` (when it can take blocks back; D's cross-allocator move): common.hpp's move_block_by between two parts.
/// False, b unchanged, when `to` refuses or the copy fails.
template <class From, class To, class Alloc, class Copy>
bool move_block(From& from, To& to, Block& b, std::size_t n, Alloc&& alloc, Copy&& copy) noexcept {
  return move_block_by(
      b, alloc(to, n), copy, [&to](Block x) noexcept { return alloy::deallocate(to, x); },
      [&from](Block x) noexcept { return alloy::deallocate(from, x); });
}

}  // namespace alloy::detail
