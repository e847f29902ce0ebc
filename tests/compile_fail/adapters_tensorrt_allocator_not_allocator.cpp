// TensorRTAllocator over a struct missing `alignment` (allocate is right): not an alloy allocator. Against the
// declaration-only NvInferRuntime.h in tests/support when TensorRT itself is not on the include path.
// expect: TensorRTAllocator: A must be an alloy allocator: a type with `static constexpr std::size_t alignment`.*nvinfer1::IGpuAllocator is not an alloy allocator
#if __has_include(<NvInferRuntime.h>)
#include <NvInferRuntime.h>
#else
#include "../support/tensorrt_decl/NvInferRuntime.h"
#endif
#include <alloy/adapters/tensorrt_allocator.hpp>

struct NoAlignment {
  alloy::Block allocate(std::size_t) noexcept { return {}; }
};

int main() {
  alloy::TensorRTAllocator<NoAlignment> trt;
  nvinfer1::IGpuAsyncAllocator& iface = trt;
  return iface.allocateAsync(64, 0, 0, nullptr) != nullptr;
}
