#pragma once
/// \file alloy/cuda_mallocator.hpp
/// The CUDA parents: `CudaMallocator` (device), `CudaAsyncMallocator` (device, stream-ordered, on a memory pool),
/// `CudaHostMallocator` (host_pinned), `CudaManagedMallocator` (managed), and `alloy::cuda_available()`.
///
/// This header includes the CUDA runtime API (`<cuda_runtime_api.h>`), which a host compiler (g++, clang) reads as
/// well as nvcc: link `alloy::cuda` (it adds the include path and `CUDA::cudart`). It never links the driver library
/// (`libcuda`) directly: that library is absent where there is no driver, and the runtime already loads it when
/// present. `<alloy/alloy.hpp>` does not include this header.
///
/// All four parents report failure as an empty Block, never by throwing, so they compose like any other parent
/// (an `AllocatorList` that tries the next region; D's `FallbackAllocator`, which DESIGN.md lists, is not in alloy
/// yet). A failed allocation clears the runtime's last error (`cudaGetLastError`), so it does not leak into the next
/// check of an unrelated call; a failed `copy` leaves it set, so the caller can ask which error it was. Without a device, or
/// without a driver, every allocation fails and `cuda_available()` is false.
///
/// Every parent has the `copy(dst, src, n, stream)` primitive: `cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault,
/// stream)`, which moves bytes between any two of host, pinned, managed and device memory (unified addressing tells
/// the runtime which is which). It is stream-ordered and does not synchronize: the bytes are there once `stream` has
/// reached the copy. (A copy from pageable host memory returns once the source has been staged, as the runtime does.)
///
/// Example (compiled and run by the tests, test cuda_headers: with a device it allocates and copies, without one it
/// checks the no-device answer):
/// ```cpp
/// if (alloy::cuda_available()) {
///   alloy::CudaMallocator dev;
///   alloy::Block b = dev.allocate(1024);
///   CHECK(b.size == 1024);
///   int host[4] = {1, 2, 3, 4}, back[4] = {};
///   CHECK(dev.copy(b.ptr, host, sizeof host, {}));   // host -> device, on the default stream
///   CHECK(dev.copy(back, b.ptr, sizeof back, {}));   // device -> host
///   CHECK(cudaStreamSynchronize(nullptr) == cudaSuccess);
///   CHECK(back[3] == 4);
///   CHECK(dev.deallocate(b));
/// } else {
///   CHECK(!alloy::CudaMallocator::instance.allocate(1024));   // no device: an empty Block, no exception
/// }
/// ```
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include <alloy/common.hpp>
#include <alloy/errors.hpp>
#include <alloy/stream_view.hpp>

namespace alloy {

/// The answer of `cudaGetDeviceCount`: `count` devices, or the runtime's error code (0 = cudaSuccess).
struct cuda_device_query {
  int count = 0;
  int error = 0;
};

/// Whether a CUDA error code means "there is no usable device here" rather than a fault: insufficient driver (35),
/// stub library (34), no device (100), initialization error (3), system driver mismatch (803), compatibility mode
/// not supported on this device (804).
constexpr bool cuda_no_device_error(int code) noexcept {
  return code == 35 || code == 34 || code == 100 || code == 3 || code == 803 || code == 804;
}

/// Asks the runtime how many devices there are (not cached). Clears the runtime's last error on failure.
inline cuda_device_query query_cuda_devices() noexcept {
  int n = 0;
  const cudaError_t e = ::cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)::cudaGetLastError();
    return {0, static_cast<int>(e)};
  }
  return {n, 0};
}

/// Whether a CUDA device can be used: `cudaGetDeviceCount` succeeds with a count > 0. Any failure, including the
/// no-device codes (`cuda_no_device_error`), means no. Asked once per process (devices do not come and go) and
/// thread-safe.
inline bool cuda_available() noexcept {
  static const bool available = [] {
    const cuda_device_query q = query_cuda_devices();
    return q.error == 0 && q.count > 0;
  }();
  return available;
}

/// `cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, stream)`: stream-ordered, does not synchronize. True for n == 0.
/// On failure returns false and leaves the runtime's last error set.
inline bool cuda_copy(void* dst, const void* src, std::size_t n, stream_view stream) noexcept {
  if (n == 0) return true;
  return ::cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, stream.value()) == cudaSuccess;
}

namespace detail {
// Runs `call(&p)` (a runtime allocation that writes p), then reads p: the read is a statement after the call, never
// an argument beside it. `f(cudaMalloc(&p, n), p)` reads p before or after cudaMalloc writes it, as the compiler
// pleases (g++ and nvcc read it first, so every allocation failed and leaked on a real GPU); this helper is the one
// place that makes the call, so that order cannot come back.
template <class Call>
Block cuda_allocate(std::size_t n, Call call) noexcept {
  void* p = nullptr;
  const cudaError_t e = call(&p);
  if (e != cudaSuccess || p == nullptr) {
    (void)::cudaGetLastError();  // an allocation failure is reported by the empty Block, not left for others
    return {};
  }
  return {p, n};
}
inline std::string cuda_error_text(cudaError_t e, const char* what) {
  std::string s(what);
  s += ": ";
  s += ::cudaGetErrorName(e);
  s += ": ";
  s += ::cudaGetErrorString(e);
  return s;
}

// Hooks found by argument-dependent lookup from device_buffer.hpp (see detail::space_tag in errors.hpp).
template <class A>
bool device_default_copy(space_tag<A>, void* dst, const void* src, std::size_t n, stream_view s) noexcept {
  return cuda_copy(dst, src, n, s);
}
// Waits for the copies issued on s (a synchronous caller: TensorRT's reallocate). An error is left for the caller's
// own error checks, as the asynchronous copy would have left it.
template <class A>
bool synchronize_copies(space_tag<A>, stream_view s) noexcept {
  return ::cudaStreamSynchronize(s.value()) == cudaSuccess;
}
template <class A>
[[noreturn]] void throw_copy_error(space_tag<A>, const char* what) {
  const cudaError_t e = ::cudaGetLastError();
  if (e == cudaSuccess) throw cuda_error(-1, what);  // the copy that failed was not a CUDA call
  throw cuda_error(static_cast<int>(e), cuda_error_text(e, what));
}
}  // namespace detail

/// CudaMallocator
///
/// Semantics: device memory from `cudaMalloc` and `cudaFree`, on the current device. `cudaMalloc` and `cudaFree`
/// synchronize the device (CUDA's rule); pool it (BitmappedBlock, Region, AllocatorList over it) or use
/// CudaAsyncMallocator where that matters.
/// Capabilities: allocate, deallocate, copy. No owns (the runtime cannot tell which allocation call made a pointer),
/// no expand, no reallocate (`alloy::reallocate` falls back to allocate + copy + deallocate).
/// Memory space: device: no block that writes into its memory accepts it as a parent (DESIGN.md §4).
/// Alignment: 256 (CUDA's guarantee for cudaMalloc). Thread safety: thread-safe. Stateless: `CudaMallocator::instance`.
/// Failure: an empty Block for n == 0, without a device, and when `cudaMalloc` fails; `deallocate` is false when
/// `cudaFree` fails.
struct CudaMallocator {
  static constexpr std::size_t alignment = 256;
  static constexpr MemorySpace memory_space = MemorySpace::device;
  static const CudaMallocator instance;

  Block allocate(std::size_t n) const noexcept {
    if (n == 0) return {};
    return detail::cuda_allocate(n, [n](void** p) { return ::cudaMalloc(p, n); });
  }
  bool deallocate(Block b) const noexcept {
    if (!b) return true;
    return ::cudaFree(b.ptr) == cudaSuccess;
  }
  /// See the file's comment: `cudaMemcpyAsync(..., cudaMemcpyDefault, stream)`, does not synchronize.
  bool copy(void* dst, const void* src, std::size_t n, stream_view stream) const noexcept {
    return cuda_copy(dst, src, n, stream);
  }
};
inline const CudaMallocator CudaMallocator::instance{};

/// CudaAsyncMallocator
///
/// Semantics: stream-ordered device memory (`cudaMallocFromPoolAsync`, `cudaFreeAsync`) from a memory pool of its
/// own, created on the current device when the allocator is constructed. A block freed on a stream is reused by the
/// next allocation ordered after the free without any synchronization; the pool keeps up to `release_threshold`
/// bytes reserved across synchronizations (`cudaMemPoolAttrReleaseThreshold`; the default, `unbounded`, keeps all,
/// which is what makes the pool fast), and `trim_to` gives memory back.
/// Capabilities: allocate(stream, n), deallocate(stream, b) (has_stream_ordered), allocate(n) and deallocate(b) (the
/// same on the default stream), copy. No owns, no expand. Not copyable (it owns the pool); movable.
/// Memory space: device. Alignment: 256. Thread safety: thread-safe (the pool is).
/// Failure: an empty Block for n == 0, without a device (then `has_pool()` is false) and when the pool cannot grow.
/// Stream rules: the memory of `allocate(s, n)` may be used by work ordered after the allocation on `s` (or on
/// another stream after an event); `deallocate(s, b)` frees it once `s` reaches that point. Neither synchronizes.
struct CudaAsyncMallocator {
  static constexpr std::size_t alignment = 256;
  static constexpr MemorySpace memory_space = MemorySpace::device;
  using stream_type = stream_view;

  /// A pool on the current device that keeps up to `release_threshold` bytes across synchronizations. Without a
  /// device the allocator exists and every allocation fails.
  explicit CudaAsyncMallocator(std::size_t release_threshold = unbounded) noexcept {
    int device = 0;
    if (::cudaGetDevice(&device) != cudaSuccess) {
      (void)::cudaGetLastError();
      return;
    }
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    if (::cudaMemPoolCreate(&pool, &props) != cudaSuccess) {
      (void)::cudaGetLastError();
      return;
    }
    std::uint64_t threshold = release_threshold;
    if (::cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold) != cudaSuccess) {
      (void)::cudaGetLastError();
      (void)::cudaMemPoolDestroy(pool);
      return;
    }
    pool_ = pool;
  }
  CudaAsyncMallocator(const CudaAsyncMallocator&) = delete;
  CudaAsyncMallocator& operator=(const CudaAsyncMallocator&) = delete;
  CudaAsyncMallocator(CudaAsyncMallocator&& o) noexcept : pool_(std::exchange(o.pool_, nullptr)) {}
  CudaAsyncMallocator& operator=(CudaAsyncMallocator&& o) noexcept {
    if (this != &o) {
      destroy();
      pool_ = std::exchange(o.pool_, nullptr);
    }
    return *this;
  }
  /// Destroys the pool. Blocks still allocated from it must have been freed (CUDA's rule for cudaMemPoolDestroy:
  /// the destruction is deferred until they are).
  ~CudaAsyncMallocator() { destroy(); }

  Block allocate(stream_view stream, std::size_t n) noexcept {
    if (n == 0 || pool_ == nullptr) return {};
    return detail::cuda_allocate(
        n, [n, this, stream](void** p) { return ::cudaMallocFromPoolAsync(p, n, pool_, stream.value()); });
  }
  bool deallocate(stream_view stream, Block b) noexcept {
    if (!b) return true;
    return ::cudaFreeAsync(b.ptr, stream.value()) == cudaSuccess;
  }
  /// allocate(default_stream, n).
  Block allocate(std::size_t n) noexcept { return allocate(default_stream, n); }
  /// deallocate(default_stream, b).
  bool deallocate(Block b) noexcept { return deallocate(default_stream, b); }
  bool copy(void* dst, const void* src, std::size_t n, stream_view stream) const noexcept {
    return cuda_copy(dst, src, n, stream);
  }

  /// Whether the pool was created (false without a device).
  [[nodiscard]] bool has_pool() const noexcept { return pool_ != nullptr; }
  /// The pool, for interop (`cudaMemPoolSetAccess`, statistics).
  [[nodiscard]] cudaMemPool_t pool() const noexcept { return pool_; }
  /// The release threshold in bytes (0 without a pool).
  [[nodiscard]] std::size_t release_threshold() const noexcept {
    std::uint64_t t = 0;
    if (pool_ && ::cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &t) != cudaSuccess) {
      (void)::cudaGetLastError();
      return 0;
    }
    return static_cast<std::size_t>(t);
  }
  /// Bytes the pool holds reserved from the device (`cudaMemPoolAttrReservedMemCurrent`), 0 without a pool.
  [[nodiscard]] std::size_t reserved_bytes() const noexcept {
    std::uint64_t t = 0;
    if (pool_ && ::cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &t) != cudaSuccess) {
      (void)::cudaGetLastError();
      return 0;
    }
    return static_cast<std::size_t>(t);
  }
  /// Releases unused memory until the pool holds at most `keep` bytes (`cudaMemPoolTrimTo`). Does not synchronize:
  /// memory freed on a stream that has not reached the free yet is not released.
  bool trim_to(std::size_t keep) noexcept {
    if (!pool_) return true;
    if (::cudaMemPoolTrimTo(pool_, keep) != cudaSuccess) {
      (void)::cudaGetLastError();
      return false;
    }
    return true;
  }

 private:
  void destroy() noexcept {
    if (pool_) {
      (void)::cudaMemPoolDestroy(pool_);
      pool_ = nullptr;
    }
  }
  cudaMemPool_t pool_ = nullptr;
};

/// CudaHostMallocator
///
/// Semantics: page-locked ("pinned") host memory from `cudaMallocHost` and `cudaFreeHost`. The host reads and writes
/// it directly, and copies between it and the device run asynchronously (a copy from pageable memory does not):
/// staging buffers for transfers. Host-accessible, so blocks that write bookkeeping into their memory accept it.
/// Capabilities: allocate, deallocate, copy. No owns, no expand.
/// Memory space: host_pinned. Alignment: 256. Thread safety: thread-safe. Stateless: `CudaHostMallocator::instance`.
/// Failure: an empty Block for n == 0, without a device or driver, and when pinning fails.
struct CudaHostMallocator {
  static constexpr std::size_t alignment = 256;
  static constexpr MemorySpace memory_space = MemorySpace::host_pinned;
  static const CudaHostMallocator instance;

  Block allocate(std::size_t n) const noexcept {
    if (n == 0) return {};
    return detail::cuda_allocate(n, [n](void** p) { return ::cudaMallocHost(p, n); });
  }
  bool deallocate(Block b) const noexcept {
    if (!b) return true;
    return ::cudaFreeHost(b.ptr) == cudaSuccess;
  }
  bool copy(void* dst, const void* src, std::size_t n, stream_view stream) const noexcept {
    return cuda_copy(dst, src, n, stream);
  }
};
inline const CudaHostMallocator CudaHostMallocator::instance{};

/// CudaManagedMallocator
///
/// Semantics: unified ("managed") memory from `cudaMallocManaged(..., cudaMemAttachGlobal)` and `cudaFree`: one
/// address valid on the host and on every device, migrated on demand. The host may touch it only when no kernel that
/// uses it is running (synchronize first, CUDA's rule).
/// Capabilities: allocate, deallocate, copy. No owns, no expand.
/// Memory space: managed. Alignment: 256. Thread safety: thread-safe. Stateless: `CudaManagedMallocator::instance`.
/// Failure: an empty Block for n == 0, without a device, and when `cudaMallocManaged` fails.
struct CudaManagedMallocator {
  static constexpr std::size_t alignment = 256;
  static constexpr MemorySpace memory_space = MemorySpace::managed;
  static const CudaManagedMallocator instance;

  Block allocate(std::size_t n) const noexcept {
    if (n == 0) return {};
    return detail::cuda_allocate(n, [n](void** p) { return ::cudaMallocManaged(p, n, cudaMemAttachGlobal); });
  }
  bool deallocate(Block b) const noexcept {
    if (!b) return true;
    return ::cudaFree(b.ptr) == cudaSuccess;
  }
  bool copy(void* dst, const void* src, std::size_t n, stream_view stream) const noexcept {
    return cuda_copy(dst, src, n, stream);
  }
};
inline const CudaManagedMallocator CudaManagedMallocator::instance{};

}  // namespace alloy
