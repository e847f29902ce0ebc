#pragma once
/// \file alloy/adapters/pmr_resource.hpp
#include <cstddef>
#include <memory_resource>
#include <new>
#include <type_traits>
#include <utility>

#include <alloy/adapters/stl_allocator.hpp>  // detail::throw_bad_alloc
#include <alloy/errors.hpp>
#include <alloy/common.hpp>

namespace alloy {

/// PmrResource<A>
///
/// Semantics: a `std::pmr::memory_resource` over a stack, so `std::pmr` containers and every API that takes a
/// `memory_resource*` draw from it. The stack is held by value (construct it in place with the constructor's
/// arguments); to share a stack that lives elsewhere, use `PmrResource<Ref<A>>`.
/// Sizes: `std::pmr` passes the size (and alignment) back to `deallocate`, so the resource records nothing; it gives
/// the stack back exactly the Block it handed out. A request of 0 bytes is served as 1 byte (pmr must return a
/// usable pointer), and freed the same way.
/// Alignment: requests up to `A::alignment` use `allocate`; larger ones use `aligned_allocate`, or throw when the
/// stack has none. An alignment that is not a power of two throws.
/// Equality (`is_equal`): the same object; or another PmrResource<A> over a stateless A (any object serves the
/// other's memory); or one whose stack compares equal (`Ref`s to the same allocator).
/// Parent: an alloy allocator (a memory_resource or a standard allocator is refused, with a message saying so);
/// host_accessible (pmr containers construct objects in the memory); for device memory use CudaMrResource.
/// Over an AnyAllocator (memory space known at run time), `allocate` throws when the erased memory is device memory.
/// Failure: `allocate` throws `alloy::bad_alloc` (a `std::bad_alloc`).
/// Thread safety: the stack's.
/// Example:
/// ```cpp
/// #include <alloy/aligned_mallocator.hpp>
/// #include <memory_resource>
/// alloy::PmrResource<alloy::AlignedMallocator> res;
/// std::pmr::vector<int> v(&res);
/// v.assign({1, 2, 3});
/// CHECK(v[2] == 3);
/// void* p = res.allocate(100, 256);           // over-aligned: aligned_allocate
/// CHECK(alloy::is_aligned(p, 256));
/// res.deallocate(p, 100, 256);
/// ```
template <class A>
class PmrResource final : public std::pmr::memory_resource {
  static_assert(allocator<A>,
                "alloy::PmrResource: A must be an alloy allocator: a type with `static constexpr std::size_t "
                "alignment` and `Block allocate(std::size_t) noexcept` (e.g. alloy::Mallocator, or a stack of blocks "
                "over it); a std::pmr::memory_resource or a standard allocator is not an alloy allocator (PmrResource "
                "makes a memory_resource from an alloy one)");
  static_assert(!allocator<A> || host_accessible_or_checked<A>,
                "alloy::PmrResource: std::pmr containers construct objects in the memory, so the stack must be "
                "host-accessible (a stack over an AnyAllocator, or a Ref to one, is not known to be: use the "
                "AnyAllocator itself, checked at run time); for device memory use alloy::CudaMrResource (cuda::mr) "
                "or alloy::device_buffer");

 public:
  PmrResource() requires std::is_default_constructible_v<A> = default;
  template <class... Args>
    requires std::is_constructible_v<A, Args...> && (sizeof...(Args) > 0)
  explicit PmrResource(Args&&... args) : a_(std::forward<Args>(args)...) {}
  PmrResource(const PmrResource&) = delete;
  PmrResource& operator=(const PmrResource&) = delete;

  [[nodiscard]] A& stack() noexcept { return a_; }
  [[nodiscard]] const A& stack() const noexcept { return a_; }

 private:
  static std::size_t served(std::size_t bytes) noexcept { return bytes == 0 ? 1 : bytes; }

  void* do_allocate(std::size_t bytes, std::size_t align) override {
    if (!is_power_of_two(align)) detail::throw_bad_alloc("alloy::PmrResource: alignment is not a power of two");
    if (!detail::runtime_host_accessible(a_))
      detail::throw_bad_alloc("alloy::PmrResource: the AnyAllocator erases a stack the host cannot touch");
    const std::size_t n = served(bytes);
    Block b{};
    if (align <= A::alignment) {
      b = a_.allocate(n);
    } else if constexpr (has_aligned_allocate<A>) {
      b = a_.aligned_allocate(n, align);
    }
    if (!b) detail::throw_bad_alloc("alloy::PmrResource: out of memory, or an alignment the stack cannot give");
    return b.ptr;
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t) override {
    if (p == nullptr) return;
    // A stack may refuse (a Region frees only its last block): the memory stays until the stack is reset, as with
    // std::pmr::monotonic_buffer_resource.
    if constexpr (has_deallocate<A>) (void)a_.deallocate(Block{p, served(bytes)});
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    if (this == &other) return true;
    const auto* o = dynamic_cast<const PmrResource*>(&other);
    if (o == nullptr) return false;
    if constexpr (stateless_allocator<A>) return true;
    else if constexpr (std::equality_comparable<A>) return a_ == o->a_;
    else return false;
  }

  [[no_unique_address]] A a_{};
};

}  // namespace alloy
