#pragma once
/// \file alloy/concepts.hpp
/// The allocator concept, one `has_<primitive>` concept per optional primitive, and the memory-space properties.
///
/// A primitive an allocator cannot support is not declared (D's rule), so each concept asks for the exact signature
/// and `noexcept`, never only for a member's name: the Block argument of `deallocate` and `owns` is taken by value
/// (a temporary binds), and the one that `expand`, `reallocate`, `aligned_reallocate` and `resolve_internal_pointer`
/// write back is a `Block&` (a member that also takes a temporary, by value or `const Block&`, could not report the
/// new block, so it does not count). The contract of each primitive is in docs/primitives.md.
#include <concepts>
#include <cstddef>
#include <type_traits>

#include <alloy/block.hpp>
#include <alloy/stream_view.hpp>
#include <alloy/ternary.hpp>

namespace alloy {

constexpr bool is_power_of_two(std::size_t x) noexcept { return x != 0 && (x & (x - 1)) == 0; }

namespace detail {
template <std::size_t N>
inline constexpr bool valid_alignment = is_power_of_two(N);
// `A::alignment` is a static data member of integral type (checked before it is used as a template argument, where
// a non-static member or a function would be a hard error instead of a failed constraint).
template <class A>
concept static_integral_alignment = requires { &A::alignment; } && !std::is_member_pointer_v<decltype(&A::alignment)> &&
                                    std::is_integral_v<std::remove_cvref_t<decltype(A::alignment)>>;
}  // namespace detail

/// allocator<A>
///
/// Semantics: `A::alignment` is a static constexpr integral power of two, and `a.allocate(n)` is `noexcept` and
/// returns exactly `Block`. Every other primitive is optional and has its own `has_<primitive>` concept below.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// #include <alloy/no_access_allocator.hpp>
/// static_assert(alloy::allocator<alloy::Mallocator> && !alloy::allocator<int>);
/// static_assert(alloy::has_deallocate<alloy::Mallocator> && !alloy::has_owns<alloy::Mallocator>);
/// static_assert(alloy::host_accessible<alloy::Mallocator>);            // no memory_space member: host
/// static_assert(!alloy::host_accessible<alloy::NoAccessAllocator>);    // memory_space = device
/// alloy::Mallocator m;
/// alloy::Block b = m.allocate(10);
/// CHECK(b.size == 10);
/// if constexpr (alloy::has_deallocate<alloy::Mallocator>) CHECK(m.deallocate(b));
/// ```
template <class A>
concept allocator = detail::static_integral_alignment<A> && requires(A& a, std::size_t n) {
  typename std::integral_constant<std::size_t, A::alignment>;
  { a.allocate(n) } noexcept -> std::same_as<Block>;
} && detail::valid_alignment<A::alignment>;

template <class A>
concept has_aligned_allocate = allocator<A> && requires(A& a, std::size_t n, std::size_t al) {
  { a.aligned_allocate(n, al) } noexcept -> std::same_as<Block>;
};
template <class A>
concept has_allocate_all = allocator<A> && requires(A& a) {
  { a.allocate_all() } noexcept -> std::same_as<Block>;
};
template <class A>
concept has_allocate_fresh = allocator<A> && requires(A& a, std::size_t n) {
  { a.allocate_fresh(n) } noexcept -> std::same_as<Block>;
};
template <class A>
concept has_expand = allocator<A> && requires(A& a, Block& b, std::size_t d) {
  { a.expand(b, d) } noexcept -> std::same_as<bool>;
} && !requires(A& a) { a.expand(Block{}, std::size_t{}); };
template <class A>
concept has_reallocate = allocator<A> && requires(A& a, Block& b, std::size_t n) {
  { a.reallocate(b, n) } noexcept -> std::same_as<bool>;
} && !requires(A& a) { a.reallocate(Block{}, std::size_t{}); };
template <class A>
concept has_aligned_reallocate = allocator<A> && requires(A& a, Block& b, std::size_t n, std::size_t al) {
  { a.aligned_reallocate(b, n, al) } noexcept -> std::same_as<bool>;
} && !requires(A& a) { a.aligned_reallocate(Block{}, std::size_t{}, std::size_t{}); };
template <class A>
concept has_owns = allocator<A> && requires(A& a, Block b) {
  { a.owns(b) } noexcept -> std::same_as<Ternary>;
  { a.owns(Block{}) } noexcept;
};
template <class A>
concept has_resolve_internal_pointer = allocator<A> && requires(A& a, const void* p, Block& r) {
  { a.resolve_internal_pointer(p, r) } noexcept -> std::same_as<Ternary>;
} && !requires(A& a, const void* p) { a.resolve_internal_pointer(p, Block{}); };
template <class A>
concept has_deallocate = allocator<A> && requires(A& a, Block b) {
  { a.deallocate(b) } noexcept -> std::same_as<bool>;
  { a.deallocate(Block{}) } noexcept;
};
template <class A>
concept has_deallocate_all = allocator<A> && requires(A& a) {
  { a.deallocate_all() } noexcept -> std::same_as<bool>;
};
template <class A>
concept has_empty = allocator<A> && requires(A& a) {
  { a.empty() } noexcept -> std::same_as<Ternary>;
};
template <class A>
concept has_good_alloc_size = allocator<A> && requires(A& a, std::size_t n) {
  { a.good_alloc_size(n) } noexcept -> std::same_as<std::size_t>;
};
/// A stateless allocator exposes its one object as `A::instance` (D's `instance`).
template <class A>
concept has_instance = allocator<A> && requires {
  { A::instance } -> std::convertible_to<const A&>;
};
/// Stream-ordered allocation (cuda::mr order: the stream first). `deallocate(s, b)` takes every block of the
/// allocator, whichever primitive gave it (docs/primitives.md).
template <class A>
concept has_stream_ordered = allocator<A> && requires(A& a, stream_view s, std::size_t n, Block b) {
  { a.allocate(s, n) } noexcept -> std::same_as<Block>;
  { a.deallocate(s, b) } noexcept -> std::same_as<bool>;
};
/// `copy(dst, src, n, stream)`: copies n bytes within or into the allocator's memory space; false on failure.
template <class A>
concept has_copy = allocator<A> && requires(A& a, void* d, const void* s, std::size_t n, stream_view st) {
  { a.copy(d, s, n, st) } noexcept -> std::same_as<bool>;
};

/// A stack whose memory space is known only at run time: `a.memory_space()` (AnyAllocator, the one type-erasure
/// boundary). Code that touches its memory asks that (see `memory_space_at_run_time`).
template <class A>
concept runtime_memory_space = requires(const A& a) {
  { a.memory_space() } noexcept -> std::same_as<MemorySpace>;
};

/// The memory space of A: `A::memory_space` when declared, else host. For a stack whose space is known only at run
/// time, device: the one answer that holds for every value, so that a block stacked on it keeps its bookkeeping on
/// the host and an adapter that hands memory to the host refuses it at compile time (answering "host" would let a Ref
/// to an AnyAllocator over device memory, or a Region over it, take device memory into std containers).
template <class A>
constexpr MemorySpace memory_space_of() noexcept {
  if constexpr (runtime_memory_space<A>)
    return MemorySpace::device;
  else if constexpr (requires { A::memory_space; })
    return static_cast<MemorySpace>(A::memory_space);
  else
    return MemorySpace::host;
}

/// a's memory space: `a.memory_space()` when it is known only at run time, else A's.
template <class A>
constexpr MemorySpace memory_space_at_run_time(const A& a) noexcept {
  if constexpr (runtime_memory_space<A>) return a.memory_space();
  else return (void)a, memory_space_of<A>();
}
/// a's alignment: `a.runtime_alignment()` when A declares one (AnyAllocator), else `A::alignment`.
template <class A>
constexpr std::size_t alignment_at_run_time(const A& a) noexcept {
  if constexpr (requires { { a.runtime_alignment() } noexcept -> std::same_as<std::size_t>; })
    return a.runtime_alignment();
  else
    return (void)a, A::alignment;
}

/// The host may read and write A's memory (host, host_pinned, managed).
template <class A>
concept host_accessible = memory_space_of<A>() != MemorySpace::device;
/// The host may construct objects in A's memory, as far as compile time can tell: A is host-accessible, or its
/// memory space is known only at run time (AnyAllocator), where the code that touches the memory checks it
/// (`memory_space_at_run_time`). What make, StlAllocator and PmrResource require of their stack.
template <class A>
concept host_accessible_or_checked = host_accessible<A> || runtime_memory_space<A>;
/// A device may read and write A's memory (device, host_pinned, managed).
template <class A>
concept device_accessible = memory_space_of<A>() != MemorySpace::host;

/// An allocator that holds no state: it costs no storage inside whatever holds it.
template <class A>
concept stateless_allocator = allocator<A> && std::is_empty_v<A>;

/// The object of a stateless A that a holder with none uses (an adapter, device_buffer): one per type and program,
/// since all objects of a stateless type are the same allocator.
template <class A>
  requires std::is_empty_v<A> && std::is_default_constructible_v<A>
A& stateless_instance() noexcept {
  static A a{};
  return a;
}

}  // namespace alloy
