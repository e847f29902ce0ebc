#pragma once
/// \file alloy/common.hpp
/// Overflow-safe size and alignment arithmetic, and D's generic fallbacks: `alloy::good_alloc_size`,
/// `alloy::reallocate`, `alloy::aligned_reallocate`, `alloy::copy`, `alloy::owns`, `alloy::deallocate`.
///
/// Size arithmetic never wraps: every checked helper reports overflow, and a request whose rounding would overflow
/// fails like any other request.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <alloy/block.hpp>
#include <alloy/concepts.hpp>
#include <alloy/config.hpp>

namespace alloy {

// ---------------------------------------------------------------------------------------------------------------
// Arithmetic

/// n rounded up to a multiple of `a` (a power of two). Precondition: no overflow (see `round_up_checked`).
constexpr std::size_t round_up(std::size_t n, std::size_t a) noexcept { return (n + a - 1) & ~(a - 1); }
/// n rounded down to a multiple of `a` (a power of two).
constexpr std::size_t round_down(std::size_t n, std::size_t a) noexcept { return n & ~(a - 1); }
/// n rounded up to a multiple of `a` (a power of two) into `out`; false (and `out` untouched) if that overflows.
constexpr bool round_up_checked(std::size_t n, std::size_t a, std::size_t& out) noexcept {
  std::size_t t = 0;
  if (__builtin_add_overflow(n, a - 1, &t)) return false;
  out = t & ~(a - 1);
  return true;
}
/// n rounded up to a multiple of `a` (a power of two) when the result is a size that one object or mapping can have
/// (at most PTRDIFF_MAX bytes), else 0: the good_alloc_size of the page allocators (MmapAllocator,
/// NoAccessAllocator), whose allocate, expand and reallocate then need no check of their own.
constexpr std::size_t round_up_object_size(std::size_t n, std::size_t a) noexcept {
  std::size_t r = 0;
  return round_up_checked(n, a, r) && r <= PTRDIFF_MAX ? r : 0;
}
/// good_alloc_size's contract kept where a layer's own hint `g` could not be computed (its rounding or its overhead
/// overflowed, so `g` is 0 or short): at least n rounded up to `al`, and 0 only when that rounding overflows. An
/// impossible request is allocate's to refuse, not the hint's (docs/primitives.md).
constexpr std::size_t hint_at_least(std::size_t g, std::size_t n, std::size_t al) noexcept {
  std::size_t r = 0;
  if (!round_up_checked(n, al, r)) return 0;
  return g >= r ? g : r;
}
/// ceil(n / d) for d > 0, without overflow.
constexpr std::size_t divide_round_up(std::size_t n, std::size_t d) noexcept { return n / d + (n % d != 0); }
/// a + b into `out`; false if that overflows (`out` left alone, as primitives.md says; the builtins would write the
/// wrapped value, hence the temporary).
constexpr bool add_checked(std::size_t a, std::size_t b, std::size_t& out) noexcept {
  std::size_t t = 0;
  if (__builtin_add_overflow(a, b, &t)) return false;
  out = t;
  return true;
}
/// a * b into `out`; false if that overflows (`out` left alone).
constexpr bool mul_checked(std::size_t a, std::size_t b, std::size_t& out) noexcept {
  std::size_t t = 0;
  if (__builtin_mul_overflow(a, b, &t)) return false;
  out = t;
  return true;
}
/// n rounded up to a multiple of any nonzero `m` into `out`; false if that overflows (`out` left alone).
constexpr bool round_up_to_multiple_checked(std::size_t n, std::size_t m, std::size_t& out) noexcept {
  const std::size_t r = n % m;
  return add_checked(n, r == 0 ? 0 : m - r, out);
}
/// log2 of a power of two.
constexpr unsigned log2_exact(std::size_t x) noexcept { return static_cast<unsigned>(__builtin_ctzll(x)); }

inline bool is_aligned(const void* p, std::size_t a) noexcept {
  return (reinterpret_cast<std::uintptr_t>(p) & (a - 1)) == 0;
}
/// `p` rounded up to a multiple of `a`, computed on integers (no pointer arithmetic past an object). Callers
/// check the result against the end of their buffer.
inline std::uintptr_t align_up(std::uintptr_t p, std::size_t a) noexcept {
  return (p + a - 1) & ~std::uintptr_t(a - 1);
}
inline void* align_up(void* p, std::size_t a) noexcept {  // pointer arithmetic: keeps p's provenance
  const std::uintptr_t u = reinterpret_cast<std::uintptr_t>(p);
  return static_cast<char*>(p) + (align_up(u, a) - u);
}
inline std::uintptr_t address_of(const void* p) noexcept { return reinterpret_cast<std::uintptr_t>(p); }
// NOLINTNEXTLINE(performance-no-int-to-ptr): the one place an address becomes a pointer: the mmap parents trim and
// return addresses computed from a mapping's start (mmap_allocator.hpp, no_access_allocator.hpp)
inline void* to_pointer(std::uintptr_t p) noexcept { return reinterpret_cast<void*>(p); }

/// Whether `b` lies entirely inside [lo, lo + size).
inline bool block_within(Block b, const void* lo, std::size_t size) noexcept {
  const auto p = address_of(b.ptr), l = address_of(lo);
  return p >= l && p - l <= size && b.size <= size - (p - l);
}

// ---------------------------------------------------------------------------------------------------------------
// Generic fallbacks (D's std.experimental.allocator.common)

/// Bytes actually reserved for a request of n: `a.good_alloc_size(n)` when A declares it, else n rounded up to
/// `A::alignment`. 0 when no request of n bytes can succeed (the rounding overflows); n == 0 gives 0.
template <allocator A>
constexpr std::size_t good_alloc_size(const A& a, std::size_t n) noexcept {
  if constexpr (has_good_alloc_size<A>) {
    return const_cast<A&>(a).good_alloc_size(n);
  } else {
    (void)a;
    std::size_t r = 0;
    return round_up_checked(n, A::alignment, r) ? r : 0;
  }
}

/// Copies n bytes into, out of or within A's memory: `a.copy` when A declares it, else `std::memmove`
/// (host-accessible A; the ranges may overlap).
/// A device allocator without `copy` cannot be copied into by the host: that does not compile.
template <allocator A>
bool copy(A& a, void* dst, const void* src, std::size_t n, stream_view s = {}) noexcept {
  if constexpr (has_copy<A>) {
    return a.copy(dst, src, n, s);
  } else {
    static_assert(host_accessible<A>,
                  "alloy::copy: this allocator's memory is not host-accessible and it has no copy primitive; "
                  "give it a copy(dst, src, n, stream) member (CUDA parents have one)");
    (void)a; (void)s;
    if (n) std::memmove(dst, src, n);
    return true;
  }
}

/// `a.owns(b)` when A declares it, else unknown.
template <allocator A>
Ternary owns(A& a, Block b) noexcept {
  if constexpr (has_owns<A>) return a.owns(b);
  else return b ? Ternary::unknown : Ternary::no;
}

/// `a.deallocate(b)` when A declares it, else false (memory is reclaimed only by deallocate_all or the destructor).
template <allocator A>
bool deallocate(A& a, Block b) noexcept {
  if constexpr (has_deallocate<A>) return a.deallocate(b);
  else return !b;
}

namespace detail {
/// `std::destroy_at` and `std::destroy_n` (arrays element by element, first to last, as the standard's), here so
/// that a header that only ends lifetimes does not include `<memory>`: 0.1-0.5 s of g++ 12 -O2 compile time per
/// translation unit (docs/performance.md, compile cost). Call them qualified, so that ADL never meets std's.
template <class T>
constexpr void destroy_at(T* p) noexcept {
  if constexpr (std::is_array_v<T>) {
    for (std::size_t i = 0; i < std::extent_v<T>; ++i) detail::destroy_at(&(*p)[i]);
  } else {
    p->~T();
  }
}
template <class T>
constexpr void destroy_n(T* p, std::size_t n) noexcept {
  for (; n != 0; --n, ++p) detail::destroy_at(p);
}

/// The two ends that every reallocate shares (D's): an empty `b` becomes `alloc(n)` (nothing for n == 0), and
/// `n == 0` gives `b` back through `dealloc` (false from it fails the call) and empties it. Returns true when it
/// handled the call, with the primitive's answer in `result`; false when both `b` and `n` are nonzero, which is the
/// caller's own work. A combinator passes its own routing as `dealloc`; reallocate_ends below passes A's deallocate.
template <class Alloc, class Dealloc>
bool reallocate_ends_by(Block& b, std::size_t n, bool& result, Alloc&& alloc, Dealloc&& dealloc) noexcept {
  if (!b) {
    if (n != 0) {
      const Block nb = alloc(n);
      if (!nb) return (result = false, true);
      b = nb;
    }
    return (result = true, true);
  }
  if (n != 0) return false;
  if (!dealloc(b)) return (result = false, true);
  b = {};
  return (result = true, true);
}
/// reallocate_ends_by with A's deallocate (when A has none, the block is dropped: its memory comes back with
/// deallocate_all or the allocator, as in D). `alloc` is `a.allocate` for reallocate, `a.aligned_allocate(·,
/// alignment)` for aligned_reallocate.
template <allocator A, class Alloc>
bool reallocate_ends(A& a, Block& b, std::size_t n, bool& result, Alloc&& alloc) noexcept {
  return reallocate_ends_by(b, n, result, alloc, [&a](Block x) noexcept {
    if constexpr (has_deallocate<A>) return a.deallocate(x);
    else return (void)a, (void)x, true;
  });
}
template <allocator A>
bool reallocate_ends(A& a, Block& b, std::size_t n, bool& result) noexcept {
  return reallocate_ends(a, b, n, result, [&a](std::size_t m) noexcept { return a.allocate(m); });
}
/// The tail every moving reallocate shares (the one implementation of it): the first min(b.size, nb.size) bytes of
/// `b` copied into `nb` by `copy(dst, src, n)`, then `b` given back through `give_back_old` and replaced by `nb`. An
/// empty `nb` fails; a failed copy gives `nb` back through `give_back_new` and fails. On failure `b` is unchanged.
template <class Copy, class GiveBackNew, class GiveBackOld>
bool move_block_by(Block& b, Block nb, Copy&& copy, GiveBackNew&& give_back_new,
                   GiveBackOld&& give_back_old) noexcept {
  if (!nb) return false;
  if (!copy(nb.ptr, b.ptr, b.size < nb.size ? b.size : nb.size)) {
    (void)give_back_new(nb);
    return false;
  }
  (void)give_back_old(b);
  b = nb;
  return true;
}
/// move_block_by within one allocator: the bytes copied through `via`'s copy (`alloy::copy`: device memory is copied
/// by its allocator), both blocks given back through `give_back`.
template <class Via, class GiveBack>
bool move_block(Block& b, Block nb, Via& via, GiveBack&& give_back) noexcept {
  return move_block_by(
      b, nb, [&via](void* d, const void* s, std::size_t n) noexcept { return alloy::copy(via, d, s, n); }, give_back,
      give_back);
}
template <allocator A>
bool move_block(A& a, Block& b, Block nb) noexcept {
  return move_block(b, nb, a, [&a](Block x) noexcept { return alloy::deallocate(a, x); });
}
}  // namespace detail

/// D's reallocate: `a.reallocate` when declared; else `expand` in place when growing; else allocate, copy (through
/// `alloy::copy`, so device memory is copied by its allocator), deallocate. `n == 0` frees `b` (when A has
/// deallocate) and empties it; an empty `b` is allocated. On failure `b` is unchanged and still owned by the caller.
/// Example:
/// ```cpp
/// #include <alloy/no_access_allocator.hpp>
/// alloy::NoAccessAllocator dev;                     // no reallocate; its memory is reached only through copy
/// static_assert(!alloy::has_reallocate<alloy::NoAccessAllocator>);
/// alloy::Block b = dev.allocate(4);
/// CHECK(dev.copy(b.ptr, "abc", 4, {}));
/// CHECK(alloy::reallocate(dev, b, 10000));          // allocate, copy (dev.copy), deallocate
/// CHECK(b.size == 10000);
/// char back[4] = {};
/// CHECK(dev.copy(back, b.ptr, 4, {}));
/// CHECK(std::strcmp(back, "abc") == 0);
/// CHECK(alloy::reallocate(dev, b, 0));              // frees
/// CHECK(!b);
/// ```
template <allocator A>
bool reallocate(A& a, Block& b, std::size_t n) noexcept {
  if constexpr (has_reallocate<A>) {
    return a.reallocate(b, n);
  } else {
    if (b && b.size == n) return true;
    if (bool r; detail::reallocate_ends(a, b, n, r)) return r;
    if constexpr (has_expand<A>) {
      if (n > b.size && a.expand(b, n - b.size)) return true;
    }
    return detail::move_block(a, b, a.allocate(n));
  }
}

/// D's alignedReallocate: `a.aligned_reallocate` when declared; else `expand` in place when growing an already
/// aligned block; else aligned_allocate + copy (through `alloy::copy`) + deallocate. `n == 0` frees and empties `b`;
/// an alignment that is not a power of two fails. On failure `b` is unchanged.
template <allocator A>
  requires has_aligned_allocate<A>
bool aligned_reallocate(A& a, Block& b, std::size_t n, std::size_t alignment) noexcept {
  if constexpr (has_aligned_reallocate<A>) {
    return a.aligned_reallocate(b, n, alignment);
  } else {
    if (!is_power_of_two(alignment)) return false;
    auto aligned_alloc = [&a, alignment](std::size_t m) noexcept { return a.aligned_allocate(m, alignment); };
    if (bool r; detail::reallocate_ends(a, b, n, r, aligned_alloc)) return r;
    if (b.size == n && is_aligned(b.ptr, alignment)) return true;
    if constexpr (has_expand<A>) {
      if (n > b.size && is_aligned(b.ptr, alignment) && a.expand(b, n - b.size)) return true;
    }
    return detail::move_block(a, b, aligned_alloc(n));
  }
}

}  // namespace alloy
