#pragma once
/// \file alloy/adapters/stl_allocator.hpp
#include <cstddef>
#include <new>
#include <type_traits>

#include <alloy/common.hpp>
#include <alloy/errors.hpp>

namespace alloy {

namespace detail {
/// Throws `alloy::bad_alloc` (a `std::bad_alloc`) from an adapter's edge.
[[noreturn]] inline void throw_bad_alloc(const char* what) { throw ::alloy::bad_alloc(what); }

/// Whether the host may touch a's memory, asked at run time for a stack whose space is known only then (AnyAllocator).
template <class A>
bool runtime_host_accessible(const A& a) noexcept {
  return memory_space_at_run_time(a) != MemorySpace::device;
}

/// A stateless stack is not stored: every object of it is the same allocator.
template <class A>
inline constexpr bool stored_by_value = stateless_allocator<A> && std::is_default_constructible_v<A>;

/// Bytes for `count` objects of `size` bytes, aligned to `align`, from `a`: plain allocate when A's alignment covers
/// it, else aligned_allocate. An empty Block on failure or when count * size overflows.
template <allocator A>
Block allocate_objects(A& a, std::size_t count, std::size_t size, std::size_t align) noexcept {
  std::size_t bytes = 0;
  if (!mul_checked(count, size, bytes) || bytes == 0) return {};
  if (align <= A::alignment) return a.allocate(bytes);
  if constexpr (has_aligned_allocate<A>) return a.aligned_allocate(bytes, align);
  return {};
}
}  // namespace detail

/// StlAllocator<T, A>
///
/// Semantics: a standard allocator (`std::allocator_traits`-complete) over any alloy stack, so `std::vector`,
/// `std::map`, `std::basic_string`, `std::allocate_shared` and every other allocator-aware container draw from it.
/// A stateless stack (an empty, default-constructible A such as Mallocator) is not stored: the StlAllocator is empty,
/// `is_always_equal` is true, and it is default-constructible. A stateful stack is held by pointer: it must outlive
/// every container that uses it; two StlAllocators are equal when they share the stack, and containers propagate
/// the allocator on copy assignment, move assignment and swap (the pointer moves with the memory).
/// Alignment: objects whose alignment exceeds `A::alignment` are served by `aligned_allocate`; when A has none,
/// `allocate` of such a T does not compile (the message says to stack an allocator with aligned_allocate, e.g.
/// AlignedMallocator).
/// Parent: an alloy allocator (a standard allocator such as std::allocator is refused, with a message saying so);
/// host_accessible (containers construct their elements in the memory). For device memory use
/// `device_buffer` or `CudaMrResource`. Over an AnyAllocator, whose memory space is known only at run time,
/// `allocate` throws when the erased stack's memory is device memory.
/// Deallocation: `deallocate(p, n)` gives back `{p, n * sizeof(T)}`. A stack without `deallocate`, or one that
/// refuses the block (a Region frees only its last block), keeps the memory until it is reset or destroyed.
/// Failure: `allocate` throws `alloy::bad_alloc` (a `std::bad_alloc`) when the stack returns an empty Block or
/// `n * sizeof(T)` overflows. `allocate(0)` returns null without asking the stack (the standard leaves it open).
/// Thread safety: the stack's.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// #include <map>
/// #include <string>
/// using Str = std::basic_string<char, std::char_traits<char>, alloy::StlAllocator<char, alloy::Mallocator>>;
/// std::vector<int, alloy::StlAllocator<int, alloy::Mallocator>> v{1, 2, 3};
/// v.push_back(4);
/// CHECK(v.size() == 4);
/// Str s("a string long enough to leave the small buffer");
/// CHECK(s.size() == 46);
/// static_assert(std::is_empty_v<alloy::StlAllocator<int, alloy::Mallocator>>);
/// ```
template <class T, class A>
class StlAllocator {
  static_assert(allocator<A>,
                "alloy::StlAllocator: A must be an alloy allocator: a type with `static constexpr std::size_t "
                "alignment` and `Block allocate(std::size_t) noexcept` (e.g. alloy::Mallocator, or a stack of blocks "
                "over it); std::allocator and other standard allocators are not alloy allocators (StlAllocator "
                "makes a standard allocator from an alloy one)");
  static_assert(!allocator<A> || host_accessible_or_checked<A>,
                "alloy::StlAllocator: std containers construct their elements in the memory, so the stack must be "
                "host-accessible (a stack over an AnyAllocator, or a Ref to one, is not known to be: use the "
                "AnyAllocator itself, checked at run time); for device memory use alloy::device_buffer or "
                "alloy::CudaMrResource");
  static_assert(!std::is_const_v<T> && !std::is_reference_v<T>, "alloy::StlAllocator: T must be an object type");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using allocator_type = A;
  using is_always_equal = std::bool_constant<detail::stored_by_value<A>>;
  using propagate_on_container_copy_assignment = std::bool_constant<!detail::stored_by_value<A>>;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::bool_constant<!detail::stored_by_value<A>>;
  template <class U>
  struct rebind {
    using other = StlAllocator<U, A>;
  };

  /// Default construction: only for a stateless stack.
  StlAllocator() noexcept requires detail::stored_by_value<A> = default;
  /// Uses `a`; a stateful `a` must outlive every container using this allocator.
  StlAllocator(A& a) noexcept {  // NOLINT(google-explicit-constructor): as pmr's polymorphic_allocator
    if constexpr (!detail::stored_by_value<A>) a_ = &a;
    else (void)a;
  }
  template <class U>
  // NOLINTNEXTLINE(google-explicit-constructor): rebinding copy, as std::allocator
  StlAllocator(const StlAllocator<U, A>& other) noexcept {
    if constexpr (!detail::stored_by_value<A>) a_ = other.a_;
    else (void)other;
  }

  [[nodiscard]] T* allocate(std::size_t n) {
    static_assert(alignof(T) <= A::alignment || has_aligned_allocate<A>,
                  "alloy::StlAllocator: alignof(T) exceeds the stack's alignment and the stack has no "
                  "aligned_allocate; put an allocator with aligned_allocate at the bottom (e.g. AlignedMallocator)");
    if (n == 0) return nullptr;
    if (!detail::runtime_host_accessible(stack()))
      detail::throw_bad_alloc("alloy::StlAllocator: the AnyAllocator erases a stack the host cannot touch");
    Block b = detail::allocate_objects(stack(), n, sizeof(T), alignof(T));
    if (!b) detail::throw_bad_alloc("alloy::StlAllocator: out of memory");
    return static_cast<T*>(b.ptr);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (p == nullptr) return;
    // A stack may refuse (a Region frees only its last block): the memory then stays until the stack is reset.
    if constexpr (has_deallocate<A>) (void)stack().deallocate(Block{p, n * sizeof(T)});
  }

  /// The stack (for a stateless stack, a fresh object of it).
  [[nodiscard]] A& stack() const noexcept {
    if constexpr (detail::stored_by_value<A>) {
      return stateless_instance<A>();
    } else {
      return *a_;
    }
  }

  template <class U>
  friend bool operator==(const StlAllocator& x, const StlAllocator<U, A>& y) noexcept {
    if constexpr (detail::stored_by_value<A>) {
      (void)x, (void)y;
      return true;
    } else {
      return &x.stack() == &y.stack();
    }
  }

 private:
  template <class, class>
  friend class StlAllocator;
  struct Nothing {};
  [[no_unique_address]] std::conditional_t<detail::stored_by_value<A>, Nothing, A*> a_{};
};

}  // namespace alloy
