#pragma once
/// \file alloy/ref.hpp
#include <cstddef>

#include <alloy/common.hpp>

namespace alloy {

/// Ref<A>
///
/// Semantics: shares a stateful allocator by pointer, like D's pointer parents (`Region!(Mallocator)*`): a block
/// built over `Ref<A>` draws from an A that lives elsewhere and must outlive it. One pointer of state.
/// Capabilities: exactly A's: every primitive A declares is forwarded, and no other (not `instance`: a Ref is not
/// stateless). `alignment` and `memory_space` are A's. The forwarding members are `const` (a Ref is a pointer: a
/// `const Ref` still allocates from its A). Copies share the same A; two Refs compare equal iff they refer to the same
/// A. Thread safety: A's.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// alloy::Mallocator m;
/// alloy::Ref<alloy::Mallocator> r(m);
/// alloy::Block b = r.allocate(32);
/// CHECK(b.size == 32);
/// CHECK(r.deallocate(b));
/// static_assert(!alloy::has_owns<alloy::Ref<alloy::Mallocator>>);
/// ```
template <class A>
class Ref {
  static_assert(allocator<A>,
                "Ref<A>: A must be an alloy allocator (a type with `static constexpr std::size_t alignment` and `Block "
                "allocate(std::size_t) noexcept`, e.g. alloy::Mallocator)");
 public:
  static constexpr std::size_t alignment = A::alignment;
  static constexpr MemorySpace memory_space = memory_space_of<A>();

  constexpr Ref(A& a) noexcept : a_(&a) {}  // NOLINT(google-explicit-constructor): a Ref parameter accepts an A
  constexpr explicit Ref(A* a) noexcept : a_(a) {
    ALLOY_ASSERT(a != nullptr, "Ref(A*): the pointer is null; a Ref must refer to an allocator");
  }

  [[nodiscard]] A& get() const noexcept { return *a_; }
  friend constexpr bool operator==(Ref, Ref) = default;

  Block allocate(std::size_t n) const noexcept { return a_->allocate(n); }
  Block aligned_allocate(std::size_t n, std::size_t al) const noexcept requires has_aligned_allocate<A> {
    return a_->aligned_allocate(n, al);
  }
  Block allocate_all() const noexcept requires has_allocate_all<A> { return a_->allocate_all(); }
  Block allocate_fresh(std::size_t n) const noexcept requires has_allocate_fresh<A> { return a_->allocate_fresh(n); }
  bool expand(Block& b, std::size_t d) const noexcept requires has_expand<A> { return a_->expand(b, d); }
  bool reallocate(Block& b, std::size_t n) const noexcept requires has_reallocate<A> { return a_->reallocate(b, n); }
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t al) const noexcept requires has_aligned_reallocate<A> {
    return a_->aligned_reallocate(b, n, al);
  }
  Ternary owns(Block b) const noexcept requires has_owns<A> { return a_->owns(b); }
  Ternary resolve_internal_pointer(const void* p, Block& r) const noexcept requires has_resolve_internal_pointer<A> {
    return a_->resolve_internal_pointer(p, r);
  }
  bool deallocate(Block b) const noexcept requires has_deallocate<A> { return a_->deallocate(b); }
  bool deallocate_all() const noexcept requires has_deallocate_all<A> { return a_->deallocate_all(); }
  Ternary empty() const noexcept requires has_empty<A> { return a_->empty(); }
  std::size_t good_alloc_size(std::size_t n) const noexcept requires has_good_alloc_size<A> {
    return a_->good_alloc_size(n);
  }
  Block allocate(stream_view s, std::size_t n) const noexcept requires has_stream_ordered<A> {
    return a_->allocate(s, n);
  }
  bool deallocate(stream_view s, Block b) const noexcept requires has_stream_ordered<A> {
    return a_->deallocate(s, b);
  }
  bool copy(void* d, const void* s, std::size_t n, stream_view st) const noexcept requires has_copy<A> {
    return a_->copy(d, s, n, st);
  }

 private:
  A* a_;
};

}  // namespace alloy
