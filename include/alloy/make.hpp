#pragma once
/// \file alloy/make.hpp
/// Typed helpers over any allocator, after D's `std.experimental.allocator` package module: `make`, `dispose`,
/// `make_array`, `expand_array`, `shrink_array`.
#include <cstddef>
#include <new>
#include <span>
#include <type_traits>
#include <utility>
#if defined(__GXX_RTTI) || defined(__cpp_rtti)
#include <typeinfo>
#endif

#include <alloy/common.hpp>

namespace alloy {

namespace detail {

// What every typed helper needs from A: memory it may construct objects in, aligned for T.
template <class T, class A>
constexpr bool check_typed() noexcept {
  static_assert(!std::is_reference_v<T> && !std::is_function_v<T> && !std::is_void_v<T>,
                "alloy::make: T must be an object type");
  static_assert(!std::is_array_v<T>, "alloy::make: T is an array type; use alloy::make_array<T>(a, n) instead");
  static_assert(host_accessible_or_checked<A>,
                "alloy::make: objects are constructed by the host, so A's memory must be host-accessible; for device "
                "memory allocate bytes (A::allocate or alloy::device_buffer) and construct on the device");
  static_assert(alignof(T) <= A::alignment || has_aligned_allocate<A>,
                "alloy::make: alignof(T) is larger than A::alignment and A has no aligned_allocate; allocate T from "
                "an allocator that has aligned_allocate (e.g. alloy::AlignedMallocator) or whose alignment is at "
                "least alignof(T)");
  return true;
}

// dispose runs T's destructor on the host: over memory the host cannot touch only a trivial one (which runs no
// code) may "run". make refuses such an A, so only a pointer from elsewhere reaches this (a non-trivial destructor
// would compile and crash).
template <class T, class A>
constexpr bool host_may_destroy() noexcept {
  static_assert(host_accessible_or_checked<A> || std::is_trivially_destructible_v<T>,
                "alloy::dispose: T's destructor would run on the host over memory the host cannot access; objects in "
                "device memory are destroyed on the device, and their bytes given back with A::deallocate");
  return true;
}

// n bytes aligned for T: aligned_allocate when T is over-aligned for A, else allocate.
// An AnyAllocator (memory space known at run time) that erases device memory gives nothing: the host builds the
// objects.
template <class T, class A>
Block allocate_for(A& a, std::size_t n) noexcept {
  if constexpr (runtime_memory_space<A>) {
    if (memory_space_at_run_time(a) == MemorySpace::device) return {};
  }
  if constexpr (alignof(T) > A::alignment)
    return a.aligned_allocate(n, alignof(T));
  else
    return a.allocate(n);
}

// Resizes a block of trivially copyable Ts to n bytes, keeping the alignment T needs (it may move: a byte copy is a
// valid move for T).
template <class T, class A>
bool reallocate_for(A& a, Block& b, std::size_t n) noexcept {
  if constexpr (alignof(T) > A::alignment)
    return alloy::aligned_reallocate(a, b, n, alignof(T));
  else
    return alloy::reallocate(a, b, n);
}

template <class T, std::size_t Extent>
Block block_of(std::span<T, Extent> s) noexcept {
  return {const_cast<void*>(static_cast<const void*>(s.data())), s.size_bytes()};
}

// Constructs a T at p from args: T(args...) when that is valid, else T{args...} (aggregates).
template <class T, class... Args>
T* construct(void* p, Args&&... args) {
  if constexpr (std::is_constructible_v<T, Args...>)
    return ::new (p) T(std::forward<Args>(args)...);
  else
    return ::new (p) T{std::forward<Args>(args)...};
}
template <class T, class... Args>
constexpr bool nothrow_construct_f() noexcept {
  if constexpr (std::is_constructible_v<T, Args...>)
    return std::is_nothrow_constructible_v<T, Args...>;
  else if constexpr (requires { T{std::declval<Args>()...}; })
    return noexcept(T{std::declval<Args>()...});
  else
    return false;
}
template <class T, class... Args>
inline constexpr bool nothrow_construct = nothrow_construct_f<T, Args...>();

// Constructs p[0, n) from args (copies of the same arguments); on an exception destroys what it built and rethrows.
template <class T, class... Args>
void construct_n(T* p, std::size_t n, const Args&... args) noexcept(nothrow_construct<T, const Args&...>) {
  std::size_t i = 0;
  if constexpr (nothrow_construct<T, const Args&...>) {
    for (; i < n; ++i) construct<T>(p + i, args...);
  } else {
    try {
      for (; i < n; ++i) construct<T>(p + i, args...);
    } catch (...) {
      while (i) detail::destroy_at(p + --i);  // last first
      throw;
    }
  }
}

// Moves (copies when T's move may throw and T is copyable) src[0, n) into raw memory dst; on an exception destroys
// what it built and rethrows, leaving src as it was.
template <class T>
void relocate_construct_n(T* dst, T* src, std::size_t n) {
  std::size_t i = 0;
  try {
    for (; i < n; ++i) ::new (static_cast<void*>(dst + i)) T(std::move_if_noexcept(src[i]));
  } catch (...) {
    detail::destroy_n(dst, i);
    throw;
  }
}

// Grows or shrinks arr to n elements in a new block: construct new elements (args), move the kept ones, destroy the
// old ones, free the old block. Strong guarantee: on failure or an exception, arr is as it was.
template <class T, class A, class... Args>
bool move_to_new_block(A& a, std::span<T>& arr, std::size_t n, std::size_t bytes, const Args&... args) {
  Block nb = allocate_for<T>(a, bytes);
  if (!nb) return false;
  T* const p = static_cast<T*>(nb.ptr);
  const std::size_t keep = arr.size() < n ? arr.size() : n;
  try {
    construct_n(p + keep, n - keep, args...);
    try {
      relocate_construct_n(p, arr.data(), keep);
    } catch (...) {
      detail::destroy_n(p + keep, n - keep);
      throw;
    }
  } catch (...) {
    alloy::deallocate(a, nb);
    throw;
  }
  detail::destroy_n(arr.data(), arr.size());
  alloy::deallocate(a, block_of(arr));
  arr = {p, n};
  return true;
}

}  // namespace detail

/// make<T>(a, args...)
///
/// Semantics: allocates `sizeof(T)` bytes from `a` (aligned for T) and constructs a T in them from `args`
/// (`T(args...)`, or `T{args...}` for an aggregate). Returns the object, or nullptr when the allocation fails.
/// Failure: nullptr; if the constructor throws, the memory is given back and the exception propagates.
/// Requirements: A is host-accessible; `alignof(T) <= A::alignment`, or A has aligned_allocate (then it is used):
/// anything else does not compile, and the message says which allocator to use.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// #include <string>
/// struct Point { int x, y; };
/// alloy::Mallocator m;
/// Point* p = alloy::make<Point>(m, 1, 2);
/// REQUIRE(p != nullptr);
/// CHECK(p->y == 2);
/// alloy::dispose(m, p);
/// std::span<std::string> s = alloy::make_array<std::string>(m, 3, std::string("hi"));
/// CHECK(s.size() == 3);
/// CHECK(alloy::expand_array(m, s, 2, std::string("yo")));
/// CHECK(s[4] == "yo");
/// CHECK(alloy::shrink_array(m, s, 4));
/// CHECK(s.size() == 1);
/// CHECK(s[0] == "hi");
/// alloy::dispose(m, s);
/// ```
template <class T, class A, class... Args>
  requires allocator<A>
T* make(A& a, Args&&... args) noexcept(detail::nothrow_construct<T, Args...>) {
  (void)detail::check_typed<T, A>();
  const Block b = detail::allocate_for<T>(a, sizeof(T));
  if (!b) return nullptr;
  if constexpr (detail::nothrow_construct<T, Args...>) {
    return detail::construct<T>(b.ptr, std::forward<Args>(args)...);
  } else {
    try {
      return detail::construct<T>(b.ptr, std::forward<Args>(args)...);
    } catch (...) {
      alloy::deallocate(a, b);
      throw;
    }
  }
}

/// Destroys `*p` and gives its memory back to `a`, which must be the allocator `make<T>` drew it from, and T the type
/// it made (not a base class: the size given back is `sizeof(T)`; checked in debug builds for polymorphic T).
/// A null `p` does nothing. Returns what `a`'s deallocate says (true without one when p is null; false when A has
/// no deallocate: the memory then comes back with deallocate_all or A itself).
template <class A, class T>
  requires allocator<A>
bool dispose(A& a, T* p) noexcept {
  static_assert(std::is_nothrow_destructible_v<T>, "alloy::dispose: T's destructor must not throw");
  static_assert(detail::host_may_destroy<T, A>(), "");
  if (p == nullptr) return true;
#if defined(__GXX_RTTI) || defined(__cpp_rtti)
  if constexpr (std::is_polymorphic_v<T>)
    ALLOY_ASSERT(typeid(*p) == typeid(T), "alloy::dispose: *p is a derived object; dispose it through its own type");
#endif
  using U = std::remove_cv_t<T>;
  U* q = const_cast<U*>(p);
  q->~U();
  return alloy::deallocate(a, Block{static_cast<void*>(q), sizeof(T)});
}

/// make_array<T>(a, n[, init])
///
/// Semantics: allocates `n * sizeof(T)` bytes from `a` (aligned for T) and constructs n elements: value-initialized
/// (`T()`: zero for scalars), or copies of `init`. Returns them as a span; `n == 0` gives an empty span.
/// Failure: an empty span when the allocation fails or `n * sizeof(T)` overflows. If a constructor throws, the
/// elements built so far are destroyed (last first), the memory is given back and the exception propagates.
/// Requirements: as for `make`. Give the span back with `dispose(a, span)`.
/// Example: see `make` above.
template <class T, class A>
  requires allocator<A>
std::span<T> make_array(A& a, std::size_t n) noexcept(detail::nothrow_construct<T>) {
  (void)detail::check_typed<T, A>();
  std::size_t bytes = 0;
  if (n == 0 || !mul_checked(n, sizeof(T), bytes)) return {};
  const Block b = detail::allocate_for<T>(a, bytes);
  if (!b) return {};
  T* const p = static_cast<T*>(b.ptr);
  if constexpr (detail::nothrow_construct<T>) {
    detail::construct_n(p, n);
  } else {
    try {
      detail::construct_n(p, n);
    } catch (...) {
      alloy::deallocate(a, b);
      throw;
    }
  }
  return {p, n};
}
/// Ditto, each element a copy of `init`.
template <class T, class A>
  requires allocator<A>
std::span<T> make_array(A& a, std::size_t n, const std::type_identity_t<T>& init) noexcept(
    detail::nothrow_construct<T, const T&>) {
  (void)detail::check_typed<T, A>();
  std::size_t bytes = 0;
  if (n == 0 || !mul_checked(n, sizeof(T), bytes)) return {};
  const Block b = detail::allocate_for<T>(a, bytes);
  if (!b) return {};
  T* const p = static_cast<T*>(b.ptr);
  if constexpr (detail::nothrow_construct<T, const T&>) {
    detail::construct_n(p, n, init);
  } else {
    try {
      detail::construct_n(p, n, init);
    } catch (...) {
      alloy::deallocate(a, b);
      throw;
    }
  }
  return {p, n};
}

/// Destroys the elements of `s` (last first) and gives its memory back to `a`, which must be the allocator
/// `make_array` (or `expand_array`/`shrink_array`) drew it from. An empty span does nothing and gives true.
/// Returns what `a`'s deallocate says.
template <class A, class T, std::size_t Extent>
  requires allocator<A>
bool dispose(A& a, std::span<T, Extent> s) noexcept {
  static_assert(std::is_nothrow_destructible_v<T>, "alloy::dispose: T's destructor must not throw");
  static_assert(detail::host_may_destroy<T, A>(), "");
  if (s.empty()) return true;
  using U = std::remove_cv_t<T>;
  U* const p = const_cast<U*>(s.data());
  for (std::size_t i = s.size(); i-- > 0;) p[i].~U();
  return alloy::deallocate(a, detail::block_of(s));
}

namespace detail {
template <class T, class A, class... Args>
bool expand_array_impl(A& a, std::span<T>& arr, std::size_t delta, const Args&... args) {
  (void)check_typed<T, A>();
  if (delta == 0) return true;
  if (arr.empty()) {
    if constexpr (sizeof...(Args) == 0) arr = alloy::make_array<T>(a, delta);
    else arr = alloy::make_array<T>(a, delta, args...);
    return !arr.empty();
  }
  std::size_t n = 0, bytes = 0;
  if (!add_checked(arr.size(), delta, n) || !mul_checked(n, sizeof(T), bytes)) return false;
  if constexpr (nothrow_construct<T, const Args&...>) {
    // The new elements cannot throw, so the block may grow in place (any T) or by a byte copy (trivially
    // copyable T) with nothing to undo afterwards.
    Block b = block_of(arr);
    const std::size_t old = arr.size();
    if constexpr (has_expand<A>) {
      if (a.expand(b, bytes - b.size)) {
        construct_n(static_cast<T*>(b.ptr) + old, delta, args...);
        arr = {static_cast<T*>(b.ptr), n};
        return true;
      }
    }
    if constexpr (std::is_trivially_copyable_v<T>) {
      // reallocate already tries everything (expand, then a new block): if it fails, so would a new block here.
      // `init` may be an element of arr, which reallocate may free: build from a copy.
      if constexpr (sizeof...(Args) == 0) {
        if (!reallocate_for<T>(a, b, bytes)) return false;
        construct_n(static_cast<T*>(b.ptr) + old, delta);
      } else {
        const T saved(args...);
        if (!reallocate_for<T>(a, b, bytes)) return false;
        construct_n(static_cast<T*>(b.ptr) + old, delta, saved);
      }
      arr = {static_cast<T*>(b.ptr), n};
      return true;
    }
  }
  return move_to_new_block(a, arr, n, bytes, args...);
}

}  // namespace detail

/// expand_array(a, arr, delta[, init])
///
/// Semantics: appends `delta` elements to `arr` (value-initialized, or copies of `init`), keeping the others and
/// their order. An empty `arr` becomes `make_array<T>(a, delta[, init])` (D returns false there).
/// How: when building the new elements cannot throw, the block grows in place with `expand` when A has it, else (T
/// trivially copyable) with `reallocate` (a byte copy may move it); otherwise (or when those fail) a new block is
/// allocated, the new elements are built, the old ones moved over (copied if their move may throw) and destroyed.
/// Failure: false, `arr` unchanged (allocation failure, or the size overflows). Strong exception guarantee when T's
/// move constructor cannot throw or T is copyable (as std::vector): if a constructor throws, everything built is
/// destroyed, the new block is freed, `arr` is unchanged, and the exception propagates. A move-only T whose move
/// may throw gets the basic guarantee only: a throw while moving leaves the old elements moved from so far in their
/// moved-from state (arr still spans them, valid and owned).
template <class A, class T>
  requires allocator<A>
bool expand_array(A& a, std::span<T>& arr, std::size_t delta) {
  return detail::expand_array_impl(a, arr, delta);
}
/// Ditto, each new element a copy of `init`.
template <class A, class T>
  requires allocator<A>
bool expand_array(A& a, std::span<T>& arr, std::size_t delta, const std::type_identity_t<T>& init) {
  return detail::expand_array_impl(a, arr, delta, init);
}

/// shrink_array(a, arr, delta)
///
/// Semantics: removes the last `delta` elements of `arr` and gives their memory back. `delta == arr.size()`
/// disposes the whole array and leaves `arr` empty; `delta == 0` is true.
/// How: a trivially copyable T is shrunk with `reallocate` (in place where A can); any other T moves its kept
/// elements into a smaller new block (a block's size is what its allocator was told, so it cannot just be kept).
/// Failure: false and `arr` unchanged when `delta > arr.size()` or the smaller block cannot be had. Exception
/// guarantee as for expand_array (only a copy constructor, or a move-only T's throwing move, can throw here).
template <class A, class T>
  requires allocator<A>
bool shrink_array(A& a, std::span<T>& arr, std::size_t delta) {
  (void)detail::check_typed<T, A>();
  static_assert(std::is_nothrow_destructible_v<T>, "alloy::shrink_array: T's destructor must not throw");
  if (delta == 0) return true;
  if (delta > arr.size()) return false;
  if (delta == arr.size()) {
    alloy::dispose(a, arr);
    arr = {};
    return true;
  }
  const std::size_t n = arr.size() - delta, bytes = n * sizeof(T);  // cannot overflow: smaller than arr's bytes
  if constexpr (std::is_trivially_copyable_v<T>) {
    Block b = detail::block_of(arr);
    if (!detail::reallocate_for<T>(a, b, bytes)) return false;
    arr = {static_cast<T*>(b.ptr), n};
    return true;
  } else {
    return detail::move_to_new_block(a, arr, n, bytes);
  }
}

}  // namespace alloy
