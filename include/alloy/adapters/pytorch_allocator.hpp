#pragma once
/// \file alloy/adapters/pytorch_allocator.hpp
#include <sys/types.h>  // ssize_t

#include <cstddef>
#include <mutex>
#include <optional>

#include <alloy/common.hpp>

struct CUstream_st;  // cudaStream_t is `CUstream_st*`; no CUDA header needed

namespace alloy {

/// PyTorchAllocator<A, MaxDevices = 64>
///
/// Semantics: the two functions of PyTorch's pluggable CUDA allocator
/// (`torch.cuda.memory.CUDAPluggableAllocator(path, alloc_fn_name, free_fn_name)`):
/// `void* alloc(ssize_t size, int device, cudaStream_t stream)` and
/// `void free(void* ptr, ssize_t size, int device, cudaStream_t stream)`, over a stack chosen at compile time. One
/// stack per device index (default-constructed on first use, for that device: PyTorch calls with that device
/// current), each behind its own mutex. Stream-ordered stacks get the stream (`allocate(stream, n)`,
/// `deallocate(stream, b)`); others ignore it.
/// Sizes: PyTorch passes the size to `free`, so nothing is recorded.
/// Export: a header-only library cannot export symbols; build a small shared library with your two extern "C"
/// functions calling `alloc` and `free` (see docs/interop.md and tests/adapters/pytorch_stack.cpp).
/// Thread safety: thread-safe (a mutex per device).
/// Failure: `alloc` returns null for size <= 0, a device index outside [0, MaxDevices), or when the stack fails; it
/// never throws (it is called from C).
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// using Torch = alloy::PyTorchAllocator<alloy::Mallocator>;
/// void* p = Torch::alloc(256, 0, nullptr);
/// CHECK(p != nullptr);
/// CHECK(Torch::live_bytes(0) == 256);
/// Torch::free(p, 256, 0, nullptr);
/// CHECK(Torch::live_bytes(0) == 0);
/// ```
template <class A, int MaxDevices = 64>
struct PyTorchAllocator {
  static_assert(allocator<A>,
                "alloy::PyTorchAllocator: A must be an alloy allocator: a type with `static constexpr std::size_t "
                "alignment` and `Block allocate(std::size_t) noexcept` (e.g. alloy::Mallocator, or a stack of blocks "
                "over it); a standard allocator or a memory resource is not one; for device "
                "memory stack on alloy::CudaMallocator, or alloy::CudaAsyncMallocator to get PyTorch's stream");
  static_assert(!allocator<A> || std::is_default_constructible_v<A>,
                "alloy::PyTorchAllocator: the stack is built on first use for each device, so it must be "
                "default-constructible; wrap a stateful stack's configuration in a default constructor");
  static_assert(MaxDevices > 0);

  static void* alloc(ssize_t size, int device, CUstream_st* stream) noexcept {
    if (size <= 0 || device < 0 || device >= MaxDevices) return nullptr;
    Slot& s = slot(device);
    std::lock_guard lock(s.mutex);
    A& a = s.get();
    Block b{};
    if constexpr (has_stream_ordered<A>) b = a.allocate(stream_view{stream}, static_cast<std::size_t>(size));
    else (void)stream, b = a.allocate(static_cast<std::size_t>(size));
    if (b) s.live += b.size;
    return b.ptr;
  }
  static void free(void* ptr, ssize_t size, int device, CUstream_st* stream) noexcept {
    if (ptr == nullptr) return;
    ALLOY_ASSERT(size > 0 && device >= 0 && device < MaxDevices,
                 "PyTorchAllocator::free: the size must be positive and the device in [0, MaxDevices)");
    if (size <= 0 || device < 0 || device >= MaxDevices) return;
    Slot& s = slot(device);
    std::lock_guard lock(s.mutex);
    const Block b{ptr, static_cast<std::size_t>(size)};
    bool ok = true;
    if constexpr (has_stream_ordered<A>) ok = s.get().deallocate(stream_view{stream}, b);
    else (void)stream, ok = alloy::deallocate(s.get(), b);
    (void)ok;  // a stack may refuse (a Region frees only its last block): the memory stays until it is reset
    s.live -= b.size;
  }
  /// Bytes allocated and not yet freed on `device`.
  static std::size_t live_bytes(int device) noexcept {
    if (device < 0 || device >= MaxDevices) return 0;
    Slot& s = slot(device);
    std::lock_guard lock(s.mutex);
    return s.live;
  }

 private:
  struct Slot {
    std::mutex mutex;
    std::optional<A> a;
    std::size_t live = 0;
    A& get() noexcept {
      if (!a) a.emplace();
      return *a;
    }
  };
  static Slot& slot(int device) noexcept {
    static Slot slots[MaxDevices];
    return slots[device];
  }
};

}  // namespace alloy
