// The adapters over CUDA parents on a real device: CudaMrResource (cuda::mr, both spellings, resource_ref, a kernel
// writing through the memory), TensorRTAllocator (through IGpuAsyncAllocator, stream-ordered), PyTorchAllocator,
// CallbackTable and AnyAllocator (copy through cudaMemcpyAsync). Without a device: ALLOY_SKIP, exit 77.
#include "skip.hpp"

#if __has_include(<NvInferRuntime.h>)
#include <NvInferRuntime.h>
#else
#include "../support/tensorrt_decl/NvInferRuntime.h"
#endif

#include <alloy/adapters/any_allocator.hpp>
#include <alloy/adapters/callback_table.hpp>
#include <alloy/adapters/cuda_mr_resource.hpp>
#include <alloy/adapters/pytorch_allocator.hpp>
#include <alloy/adapters/tensorrt_allocator.hpp>
#include <alloy/region.hpp>

#include <cstring>
#include <vector>

#include <doctest/doctest.h>

#include "support/cuda_stream.hpp"

using alloy::test::Stream;

namespace {
__global__ void iota_kernel(unsigned* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{blockDim.x} * gridDim.x)
    p[i] = static_cast<unsigned>(i);
}
bool check_iota(const void* dev, std::size_t n) {
  std::vector<unsigned> host(n);
  if (cudaMemcpy(host.data(), dev, n * sizeof(unsigned), cudaMemcpyDeviceToHost) != cudaSuccess) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (host[i] != i) return false;
  return true;
}
}  // namespace

TEST_CASE("CudaMrResource over CudaMallocator and CudaAsyncMallocator") {
  Stream s;
  alloy::CudaMrResource<alloy::CudaMallocator> dev;
  static_assert(cuda::has_property<decltype(dev), cuda::mr::device_accessible>);
  static_assert(!cuda::has_property<decltype(dev), cuda::mr::host_accessible>);
  void* p = dev.allocate(1 << 20, 256);
  iota_kernel<<<64, 256>>>(static_cast<unsigned*>(p), (1 << 20) / 4);
  CHECK(check_iota(p, (1 << 20) / 4));
  dev.deallocate(p, 1 << 20, 256);

  alloy::CudaAsyncMallocator pool;
  alloy::CudaMrResource<alloy::CudaAsyncMallocator> async(pool);
  void* q = async.allocate_async(4096, 256, cuda::stream_ref{s.s});
  iota_kernel<<<4, 256, 0, s.s>>>(static_cast<unsigned*>(q), 1024);
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
  CHECK(check_iota(q, 1024));
  async.deallocate_async(q, 4096, 256, cuda::stream_ref{s.s});
  void* r = async.allocate(cuda::stream_ref{s.s}, 4096, 256);  // 3.1+ spelling
  async.deallocate(cuda::stream_ref{s.s}, r, 4096, 256);
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);

  alloy::CudaMrResource<alloy::CudaManagedMallocator> managed;
  static_assert(cuda::has_property<decltype(managed), cuda::mr::host_accessible> &&
                cuda::has_property<decltype(managed), cuda::mr::device_accessible>);
  auto* m = static_cast<unsigned*>(managed.allocate(4096, 256));
  iota_kernel<<<4, 256>>>(m, 1024);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(m[1023] == 1023u);  // managed: the host reads it directly
  managed.deallocate(m, 4096, 256);
}

TEST_CASE("TensorRTAllocator over CudaAsyncMallocator: stream-ordered through IGpuAsyncAllocator") {
  Stream s;
  alloy::TensorRTAllocator<alloy::CudaAsyncMallocator> trt;
  nvinfer1::IGpuAsyncAllocator& a = trt;
  void* p = a.allocateAsync(1 << 16, 256, 0, s.s);
  REQUIRE(p != nullptr);
  iota_kernel<<<16, 256, 0, s.s>>>(static_cast<unsigned*>(p), (1 << 16) / 4);
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
  CHECK(check_iota(p, (1 << 16) / 4));
  void* q = trt.reallocate(p, 256, 1 << 18);  // moved by the stack's copy
  REQUIRE(q != nullptr);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(check_iota(q, (1 << 16) / 4));
  CHECK(a.deallocateAsync(q, s.s));
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
  CHECK(trt.live_blocks() == 0);
}

TEST_CASE("PyTorchAllocator, CallbackTable and AnyAllocator over CUDA parents") {
  using Torch = alloy::PyTorchAllocator<alloy::CudaMallocator, 4>;
  void* p = Torch::alloc(4096, 0, nullptr);
  REQUIRE(p != nullptr);
  iota_kernel<<<4, 256>>>(static_cast<unsigned*>(p), 1024);
  CHECK(check_iota(p, 1024));
  Torch::free(p, 4096, 0, nullptr);
  CHECK(Torch::live_bytes(0) == 0);

  alloy_callback_table* t = alloy::make_callback_table<alloy::Region<alloy::CudaMallocator>>(std::size_t{1} << 20);
  CHECK(t->memory_space == ALLOY_MEMORY_DEVICE);
  void* b = t->alloc(t->obj, 4096);
  iota_kernel<<<4, 256>>>(static_cast<unsigned*>(t->addr_of_block(b)), 1024);
  CHECK(check_iota(t->addr_of_block(b), 1024));
  t->free(t->obj, b);
  t->destroy(t->obj);

  alloy::AnyAllocator any(alloy::CudaMallocator{});
  CHECK(any.memory_space() == alloy::MemorySpace::device);
  alloy::Block d = any.allocate(4096);
  std::vector<unsigned> src(1024);
  for (unsigned i = 0; i < 1024; ++i) src[i] = i;
  CHECK(any.copy(d.ptr, src.data(), 4096));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(check_iota(d.ptr, 1024));
  CHECK(any.deallocate(d));
}
