#pragma once
/// \file alloy/adapters/tensorrt_allocator.hpp
/// TensorRTAllocator is defined when TensorRT's <NvInferRuntime.h> is found (or was included before this header);
/// without it this header declares nothing.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include <alloy/common.hpp>
#include <alloy/errors.hpp>

#if !defined(NV_INFER_RUNTIME_H) && __has_include(<NvInferRuntime.h>)
#include <NvInferRuntime.h>
#endif

#if defined(NV_INFER_RUNTIME_H)

namespace alloy {

/// TensorRTAllocator<A>
///
/// Semantics: TensorRT's `nvinfer1::IGpuAsyncAllocator` over a stack (`runtime->setGpuAllocator(&a)`,
/// `builder->setGpuAllocator(&a)`): `allocateAsync(size, alignment, flags, stream)` and
/// `deallocateAsync(memory, stream)`, plus `reallocate(base, alignment, new_size)` for resizable allocations. The
/// TensorRTAllocator owns its stack (constructed from the constructor's arguments; `TensorRTAllocator<Ref<A>>` shares
/// one). It must outlive every TensorRT object that uses it (TensorRT's rule).
/// Sizes: `deallocateAsync` carries no size, so a table maps each live pointer to its size; the stack gets back
/// exactly the Block it gave.
/// Alignment: 0 (any) uses `allocate`; a power of two up to `A::alignment` too; a larger one `aligned_allocate`
/// (nullptr when the stack has none); anything else fails. Streams: a stream-ordered stack receives the stream.
/// reallocate: in place when the block shrinks or the stack can `expand` it; else allocate, copy through the stack's
/// copy primitive (on the default stream, waited for when CUDA may have made it asynchronously: reallocate is
/// synchronous), free the old block; nullptr on failure, the old block still valid. When the stack cannot copy its
/// memory (neither host_accessible nor `copy`) it answers as TensorRT's default does: nullptr (not supported).
/// Thread safety: thread-safe, as TensorRT requires (one mutex around the stack and the table).
/// Failure: nullptr for size 0, a bad alignment, or when the stack (or the table) is out of memory. Never throws.
/// Live blocks left at destruction are given back to the stack.
/// Example:
/// ```cpp
/// #include <alloy/no_access_allocator.hpp>
/// alloy::TensorRTAllocator<alloy::NoAccessAllocator> trt;
/// nvinfer1::IGpuAsyncAllocator& iface = trt;
/// void* p = iface.allocateAsync(1000, 256, 0, nullptr);
/// CHECK(alloy::is_aligned(p, 256));
/// CHECK(iface.allocateAsync(0, 0, 0, nullptr) == nullptr);
/// CHECK(iface.deallocateAsync(p, nullptr));
/// CHECK(trt.live_blocks() == 0);
/// ```
template <class A>
class TensorRTAllocator final : public nvinfer1::IGpuAsyncAllocator {
  static_assert(allocator<A>,
                "alloy::TensorRTAllocator: A must be an alloy allocator: a type with `static constexpr std::size_t "
                "alignment` and `Block allocate(std::size_t) noexcept` (e.g. alloy::Mallocator, or a stack of blocks "
                "over it); an nvinfer1::IGpuAllocator is not an alloy allocator (TensorRTAllocator "
                "makes one from an alloy allocator); for device memory stack on alloy::CudaMallocator, or "
                "alloy::CudaAsyncMallocator to get TensorRT's stream");

 public:
  template <class... Args>
    requires std::is_constructible_v<A, Args...>
  explicit TensorRTAllocator(Args&&... args) : a_(std::forward<Args>(args)...) {}
  TensorRTAllocator(const TensorRTAllocator&) = delete;
  TensorRTAllocator& operator=(const TensorRTAllocator&) = delete;
  ~TensorRTAllocator() override {
    for (auto& [p, n] : sizes_) alloy::deallocate(a_, Block{p, n});
  }

  void* allocateAsync(std::uint64_t const size, std::uint64_t const alignment, nvinfer1::AllocatorFlags const,
                      cudaStream_t stream) noexcept override {
    if (size == 0 || size > SIZE_MAX || (alignment != 0 && !is_power_of_two(alignment))) return nullptr;
    std::lock_guard lock(mutex_);
    const Block b = allocate_locked(static_cast<std::size_t>(size), static_cast<std::size_t>(alignment), stream);
    if (!b) return nullptr;
    if (!record(b)) {
      deallocate_locked(b, stream);
      return nullptr;
    }
    return b.ptr;
  }

  bool deallocateAsync(void* const memory, cudaStream_t stream) noexcept override {
    if (memory == nullptr) return true;
    std::lock_guard lock(mutex_);
    auto it = sizes_.find(memory);
    ALLOY_ASSERT(it != sizes_.end(), "TensorRTAllocator::deallocateAsync: not a live block of this allocator");
    if (it == sizes_.end()) return false;
    // A stack may refuse (a Region frees only its last block): the block is no longer TensorRT's either way.
    const bool ok = deallocate_locked(Block{memory, it->second}, stream);
    sizes_.erase(it);
    return ok;
  }

  void* reallocate(void* const base, std::uint64_t alignment, std::uint64_t new_size) noexcept override {
    if constexpr (host_accessible<A> || has_copy<A>) {
      if (new_size == 0 || new_size > SIZE_MAX || (alignment != 0 && !is_power_of_two(alignment))) return nullptr;
      if (base == nullptr) return allocateAsync(new_size, alignment, 0, nullptr);
      const auto n = static_cast<std::size_t>(new_size);
      std::lock_guard lock(mutex_);
      auto it = sizes_.find(base);
      if (it == sizes_.end()) return nullptr;
      if (n <= it->second && (alignment == 0 || is_aligned(base, alignment))) return base;  // shrink in place
      Block b{base, it->second};
      if constexpr (has_expand<A>) {
        if (n > b.size && (alignment == 0 || is_aligned(base, alignment)) && a_.expand(b, n - b.size)) {
          it->second = b.size;
          return base;
        }
      }
      const Block nb = allocate_locked(n, static_cast<std::size_t>(alignment), nullptr);
      if (!nb) return nullptr;
      if (!record(nb)) {
        deallocate_locked(nb, nullptr);
        return nullptr;
      }
      if (!alloy::copy(a_, nb.ptr, base, b.size < n ? b.size : n, stream_view{}) || !copies_done()) {
        sizes_.erase(nb.ptr);
        deallocate_locked(nb, nullptr);
        return nullptr;
      }
      deallocate_locked(b, nullptr);
      sizes_.erase(base);
      return nb.ptr;
    } else {
      (void)base, (void)alignment, (void)new_size;
      return nullptr;
    }
  }

  [[nodiscard]] A& stack() noexcept { return a_; }
  /// Blocks handed out and not yet deallocated.
  [[nodiscard]] std::size_t live_blocks() const noexcept {
    std::lock_guard lock(mutex_);
    return sizes_.size();
  }

 private:
  // reallocate has no stream and TensorRT reads the new block as soon as it returns: a copy that CUDA may have made
  // asynchronously (device memory, <alloy/cuda_mallocator.hpp> included) is waited for.
  static bool copies_done() noexcept {
    if constexpr (memory_space_of<A>() != MemorySpace::host) {
      if constexpr (requires { synchronize_copies(detail::space_tag<A>{}, stream_view{}); })
        return synchronize_copies(detail::space_tag<A>{}, stream_view{});
    }
    return true;
  }
  Block allocate_locked(std::size_t n, std::size_t align, cudaStream_t stream) noexcept {
    if (align <= A::alignment) {
      if constexpr (has_stream_ordered<A>) return a_.allocate(stream_view{stream}, n);
      else return (void)stream, a_.allocate(n);
    }
    if constexpr (has_aligned_allocate<A>) return a_.aligned_allocate(n, align);
    return {};
  }
  bool deallocate_locked(Block b, cudaStream_t stream) noexcept {
    if constexpr (has_stream_ordered<A>) return a_.deallocate(stream_view{stream}, b);
    else return (void)stream, alloy::deallocate(a_, b);
  }
  bool record(Block b) noexcept {
    try {
      sizes_.emplace(b.ptr, b.size);
      return true;
    } catch (...) {  // out of memory for the table
      return false;
    }
  }

  mutable std::mutex mutex_;
  std::unordered_map<void*, std::size_t> sizes_;
  [[no_unique_address]] A a_;
};

}  // namespace alloy

#endif  // NV_INFER_RUNTIME_H
