// A PyTorch pluggable allocator: a shared library exporting the two functions that
// torch.cuda.memory.CUDAPluggableAllocator(path, "alloy_torch_alloc", "alloy_torch_free") loads, built from a stack
// chosen at compile time (ALLOY_TORCH_STACK_*). The test loads it with dlopen.
#include <alloy/adapters/pytorch_allocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/region.hpp>

#if defined(ALLOY_TORCH_STACK_MALLOCATOR)
using Stack = alloy::Mallocator;
#elif defined(ALLOY_TORCH_STACK_NOACCESS)
using Stack = alloy::NoAccessAllocator;  // device-like: the library must never touch the memory it hands out
#else
#error "define ALLOY_TORCH_STACK_MALLOCATOR or ALLOY_TORCH_STACK_NOACCESS"
#endif
using Torch = alloy::PyTorchAllocator<Stack, 8>;

#define ALLOY_EXPORT extern "C" __attribute__((visibility("default")))
ALLOY_EXPORT void* alloy_torch_alloc(ssize_t size, int device, CUstream_st* stream) {
  return Torch::alloc(size, device, stream);
}
ALLOY_EXPORT void alloy_torch_free(void* ptr, ssize_t size, int device, CUstream_st* stream) {
  Torch::free(ptr, size, device, stream);
}
// Not part of PyTorch's interface: lets the test check that every byte came back.
ALLOY_EXPORT size_t alloy_torch_live_bytes(int device) { return Torch::live_bytes(device); }
ALLOY_EXPORT int alloy_torch_memory_space(void) { return static_cast<int>(alloy::memory_space_of<Stack>()); }
