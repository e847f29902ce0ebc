// Declaration-only stand-in for TensorRT 10's NvInferRuntimeBase.h: only what alloy's TensorRT adapter touches,
// written from the documented TensorRT 10 C++ API (the nvinfer1::IVersionedInterface, InterfaceInfo, APILanguage,
// AllocatorFlag(s) and v_1_0::IGpuAllocator reference pages). Not NVIDIA's header: it declares the same names,
// signatures and virtual functions so that a class deriving from IGpuAsyncAllocator compiles and can be called
// through the interface in tests. The real headers are used instead whenever they are found.
#ifndef NV_INFER_RUNTIME_BASE_H
#define NV_INFER_RUNTIME_BASE_H

#include <cstddef>
#include <cstdint>

#if __has_include(<cuda_runtime_api.h>)
#include <cuda_runtime_api.h>
#else
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;
#endif

#define TRT_DEPRECATED [[deprecated]]

namespace nvinfer1 {

//! The language an interface was implemented in.
enum class APILanguage : int32_t { kCPP = 0, kPYTHON = 1 };

//! Version information of an interface.
class InterfaceInfo {
 public:
  char const* kind;
  int32_t major;
  int32_t minor;
};

//! Base of TensorRT's versioned application-implemented interfaces.
class IVersionedInterface {
 public:
  virtual APILanguage getAPILanguage() const noexcept { return APILanguage::kCPP; }
  virtual InterfaceInfo getInterfaceInfo() const noexcept = 0;
  virtual ~IVersionedInterface() noexcept = default;

 protected:
  IVersionedInterface() = default;
  IVersionedInterface(IVersionedInterface const&) = default;
  IVersionedInterface(IVersionedInterface&&) = default;
  IVersionedInterface& operator=(IVersionedInterface const&) & = default;
  IVersionedInterface& operator=(IVersionedInterface&&) & = default;
};

//! Flags passed to the allocation callbacks (a bit set of AllocatorFlag).
using AllocatorFlags = uint32_t;
//! kRESIZABLE: TensorRT may call reallocate() on this allocation.
enum class AllocatorFlag : int32_t { kRESIZABLE = 0 };

namespace v_1_0 {
//! Application-implemented GPU allocator (all callbacks must be thread-safe).
class IGpuAllocator : public IVersionedInterface {
 public:
  TRT_DEPRECATED virtual void* allocate(uint64_t const size, uint64_t const alignment,
                                        AllocatorFlags const flags) noexcept = 0;
  ~IGpuAllocator() override = default;
  IGpuAllocator() = default;
  //! Resize in place or move; nullptr on failure (the old allocation stays valid). Default: not supported.
  virtual void* reallocate(void* const /*baseAddr*/, uint64_t /*alignment*/, uint64_t /*newSize*/) noexcept {
    return nullptr;
  }
  TRT_DEPRECATED virtual bool deallocate(void* const memory) noexcept = 0;
  virtual void* allocateAsync(uint64_t const size, uint64_t const alignment, AllocatorFlags const flags,
                              cudaStream_t /*stream*/) noexcept {
    return allocate(size, alignment, flags);
  }
  virtual bool deallocateAsync(void* const memory, cudaStream_t /*stream*/) noexcept { return deallocate(memory); }
  InterfaceInfo getInterfaceInfo() const noexcept override { return {"IGpuAllocator", 1, 0}; }

 protected:
  IGpuAllocator(IGpuAllocator const&) = default;
  IGpuAllocator(IGpuAllocator&&) = default;
  IGpuAllocator& operator=(IGpuAllocator const&) & = default;
  IGpuAllocator& operator=(IGpuAllocator&&) & = default;
};
}  // namespace v_1_0

using IGpuAllocator = v_1_0::IGpuAllocator;

}  // namespace nvinfer1

#endif  // NV_INFER_RUNTIME_BASE_H
