#pragma once
/// \file alloy/adapters/cuda_mr_resource.hpp
/// alloy-header: cuda (needs CCCL's <cuda/memory_resource>: nvcc finds it; with a host compiler add the toolkit's
/// include/ and include/cccl/ directories).
#include <cstddef>
#include <new>
#include <type_traits>

#include <alloy/adapters/stl_allocator.hpp>  // detail::throw_bad_alloc, detail::stored_by_value
#include <alloy/common.hpp>

// CCCL 3.0 keeps cuda::mr behind this switch; 3.1 and later ignore it.
#ifndef LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE
#define LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE
#endif
#include <cuda/memory_resource>
#include <cuda/stream_ref>

namespace alloy {

/// CudaMrResource<A>
///
/// Semantics: a CCCL `cuda::mr` memory resource over a stack, so every consumer of `cuda::mr::resource_ref` /
/// `any_resource` (RMM, Thrust, cudax containers) can draw from it. It satisfies the resource and the
/// stream-ordered resource concepts in both of CCCL's spellings, each `static_assert`ed against the CCCL it is
/// compiled with:
/// CCCL 3.0 (`cuda::mr::resource`, `cuda::mr::async_resource`): `allocate(bytes, align)`,
/// `deallocate(p, bytes, align)`, `allocate_async(bytes, align, stream)`, `deallocate_async(p, bytes, align, stream)`;
/// CCCL 3.1+ (`cuda::mr::synchronous_resource`, `cuda::mr::resource`): `allocate_sync(bytes, align)`,
/// `deallocate_sync(p, bytes, align)`, `allocate(stream, bytes, align)`, `deallocate(stream, p, bytes, align)`.
/// Properties: `cuda::mr::device_accessible` iff the stack's memory space is device, host_pinned or managed;
/// `cuda::mr::host_accessible` iff it is host, host_pinned or managed (from `memory_space_of<A>()`).
/// Holding: a stateless stack is not stored (the resource is empty and all of them are equal); a stateful one is held
/// by pointer, must outlive the resource and its copies, and two resources are equal when they share it. The
/// resource is a cheap copyable handle, as `cuda::mr` expects.
/// Sizes: cuda::mr passes size and alignment to deallocate, so nothing is recorded.
/// Alignment: up to `A::alignment` through `allocate`, larger through `aligned_allocate`, else failure.
/// Streams: a stream-ordered stack (`allocate(stream_view, n)`) receives the stream; others allocate at once and
/// ignore it (which is valid stream order).
/// Failure: allocation throws `alloy::bad_alloc` (a `std::bad_alloc`), as cuda::mr resources do; 0 bytes gives null.
/// Deallocation never throws. Thread safety: the stack's.
/// Example:
/// ```cpp
/// #include <alloy/no_access_allocator.hpp>
/// alloy::CudaMrResource<alloy::NoAccessAllocator> mr;
/// cuda::mr::resource_ref<cuda::mr::device_accessible> ref{mr};   // CCCL 3.0 spelling
/// void* p = mr.allocate_sync(1000, 256);
/// CHECK(alloy::is_aligned(p, 256));
/// mr.deallocate_sync(p, 1000, 256);
/// ```
template <class A>
class CudaMrResource {
  static_assert(allocator<A>,
                "alloy::CudaMrResource: A must be an alloy allocator: a type with `static constexpr std::size_t "
                "alignment` and `Block allocate(std::size_t) noexcept` (e.g. alloy::Mallocator, or a stack of blocks "
                "over it); a cuda::mr resource (or an RMM memory resource) is not an alloy "
                "allocator (CudaMrResource makes one from an alloy allocator); for device memory stack on "
                "alloy::CudaMallocator or alloy::CudaAsyncMallocator");
  static_assert(!allocator<A> || !runtime_memory_space<A>,
                "alloy::CudaMrResource: cuda::mr properties (device_accessible, host_accessible) are compile-time, but "
                "an AnyAllocator's memory space is known only at run time: wrap the concrete stack instead");
 public:
  CudaMrResource() noexcept requires detail::stored_by_value<A> { check(); }
  CudaMrResource(A& a) noexcept {  // NOLINT(google-explicit-constructor): a stack converts to a resource
    if constexpr (!detail::stored_by_value<A>) a_ = &a;
    else (void)a;
    check();
  }

  // CCCL 3.1+ spelling.
  void* allocate_sync(std::size_t bytes, std::size_t align) { return do_allocate(bytes, align, nullptr, false); }
  void deallocate_sync(void* p, std::size_t bytes, std::size_t align) noexcept {
    do_deallocate(p, bytes, align, nullptr, false);
  }
  void* allocate(::cuda::stream_ref s, std::size_t bytes, std::size_t align) {
    return do_allocate(bytes, align, s.get(), true);
  }
  void deallocate(::cuda::stream_ref s, void* p, std::size_t bytes, std::size_t align) noexcept {
    do_deallocate(p, bytes, align, s.get(), true);
  }

  // CCCL 3.0 spelling.
  void* allocate(std::size_t bytes, std::size_t align) { return do_allocate(bytes, align, nullptr, false); }
  void deallocate(void* p, std::size_t bytes, std::size_t align) noexcept {
    do_deallocate(p, bytes, align, nullptr, false);
  }
  void* allocate_async(std::size_t bytes, std::size_t align, ::cuda::stream_ref s) {
    return do_allocate(bytes, align, s.get(), true);
  }
  void deallocate_async(void* p, std::size_t bytes, std::size_t align, ::cuda::stream_ref s) noexcept {
    do_deallocate(p, bytes, align, s.get(), true);
  }

  [[nodiscard]] A& stack() const noexcept {
    if constexpr (detail::stored_by_value<A>) {
      return stateless_instance<A>();
    } else {
      return *a_;
    }
  }

  friend bool operator==(const CudaMrResource& x, const CudaMrResource& y) noexcept {
    if constexpr (detail::stored_by_value<A>) return (void)x, (void)y, true;
    else return x.a_ == y.a_;
  }
  friend bool operator!=(const CudaMrResource& x, const CudaMrResource& y) noexcept { return !(x == y); }

  friend constexpr void get_property(const CudaMrResource&, ::cuda::mr::device_accessible) noexcept
    requires(memory_space_of<A>() != MemorySpace::host)
  {}
  friend constexpr void get_property(const CudaMrResource&, ::cuda::mr::host_accessible) noexcept
    requires(memory_space_of<A>() != MemorySpace::device)
  {}

 private:
  static void check() noexcept {
#if CCCL_VERSION >= 3001000
    static_assert(::cuda::mr::synchronous_resource<CudaMrResource> && ::cuda::mr::resource<CudaMrResource>,
                  "alloy::CudaMrResource must satisfy CCCL's cuda::mr resource concepts");
#else
    static_assert(::cuda::mr::resource<CudaMrResource> && ::cuda::mr::async_resource<CudaMrResource>,
                  "alloy::CudaMrResource must satisfy CCCL's cuda::mr resource concepts");
#endif
    if constexpr (memory_space_of<A>() != MemorySpace::host)
      static_assert(::cuda::has_property<CudaMrResource, ::cuda::mr::device_accessible>);
    if constexpr (memory_space_of<A>() != MemorySpace::device)
      static_assert(::cuda::has_property<CudaMrResource, ::cuda::mr::host_accessible>);
  }

  void* do_allocate(std::size_t bytes, std::size_t align, CUstream_st* s, bool ordered) {
    if (bytes == 0) return nullptr;
    if (!is_power_of_two(align)) detail::throw_bad_alloc("alloy::CudaMrResource: alignment is not a power of two");
    A& a = stack();
    Block b{};
    if (align <= A::alignment) {
      if constexpr (has_stream_ordered<A>) b = ordered ? a.allocate(stream_view{s}, bytes) : a.allocate(bytes);
      else (void)s, (void)ordered, b = a.allocate(bytes);
    } else if constexpr (has_aligned_allocate<A>) {
      b = a.aligned_allocate(bytes, align);
    }
    if (!b) detail::throw_bad_alloc("alloy::CudaMrResource: out of memory, or an alignment the stack cannot give");
    return b.ptr;
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t, CUstream_st* s, bool ordered) noexcept {
    if (p == nullptr) return;
    A& a = stack();
    bool ok = true;
    if constexpr (has_stream_ordered<A>) ok = ordered ? a.deallocate(stream_view{s}, Block{p, bytes}) : alloy::deallocate(a, Block{p, bytes});
    else (void)s, (void)ordered, ok = alloy::deallocate(a, Block{p, bytes});
    (void)ok;  // a stack may refuse (a Region frees only its last block): the memory stays until it is reset
  }

  struct Nothing {};
  [[no_unique_address]] std::conditional_t<detail::stored_by_value<A>, Nothing, A*> a_{};
};

}  // namespace alloy
