// Declaration-only stand-in for TensorRT 10's NvInferRuntime.h, reduced to nvinfer1::IGpuAsyncAllocator, written
// from the documented TensorRT 10 C++ API (the v_1_0::IGpuAsyncAllocator reference page). Not NVIDIA's header; see
// NvInferRuntimeBase.h beside it. It uses the real header's include guard, so code that checks for TensorRT finds it.
#ifndef NV_INFER_RUNTIME_H
#define NV_INFER_RUNTIME_H

// Treated as a system header, as an installed TensorRT is (-isystem): its inline bodies call the deprecated
// allocate/deallocate, which must not warn in code that includes it.
#pragma GCC system_header

#include "NvInferRuntimeBase.h"

namespace nvinfer1 {
namespace v_1_0 {
//! Application-implemented stream-ordered GPU allocator: override allocateAsync and deallocateAsync.
class IGpuAsyncAllocator : public IGpuAllocator {
 public:
  IGpuAsyncAllocator() = default;
  ~IGpuAsyncAllocator() override = default;
  //! Thread-safe. Alignment is 0 (any) or a power of two not above cudaMalloc's; nullptr for size 0 or failure.
  void* allocateAsync(uint64_t const size, uint64_t const alignment, AllocatorFlags const flags,
                      cudaStream_t /*stream*/) noexcept override = 0;
  //! Thread-safe. True when the memory was released.
  bool deallocateAsync(void* const memory, cudaStream_t /*stream*/) noexcept override = 0;
  TRT_DEPRECATED void* allocate(uint64_t const size, uint64_t const alignment,
                                AllocatorFlags const flags) noexcept override {
    return allocateAsync(size, alignment, flags, nullptr);
  }
  TRT_DEPRECATED bool deallocate(void* const memory) noexcept override { return deallocateAsync(memory, nullptr); }
  InterfaceInfo getInterfaceInfo() const noexcept override { return {"IGpuAllocator", 1, 0}; }
};
}  // namespace v_1_0

using IGpuAsyncAllocator = v_1_0::IGpuAsyncAllocator;

}  // namespace nvinfer1

#endif  // NV_INFER_RUNTIME_H
