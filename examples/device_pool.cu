// A pooled device stack feeding device_buffers: an AllocatorList of BitmappedBlocks over CudaMallocator.
//
// Each BitmappedBlock takes one 64 MiB slab from cudaMalloc and hands out 256-byte blocks from it; its bitmap lives
// on the host (the memory-space rule: the payload is device memory, the host never touches it). The list adds a slab
// when the ones it has are full and gives an empty one back to cudaMalloc's heap. So after warm-up, buffers cost no
// cudaMalloc/cudaFree (which synchronize the device), only a few bit operations on the host.
//
// Without a GPU the program says so and exits 77 (ctest: skipped).
#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/cuda_mallocator.hpp>
#include <alloy/device_buffer.hpp>
#include <alloy/mallocator.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

using Slab = alloy::BitmappedBlock<256, 256, alloy::CudaMallocator>;
struct Slabs {  // the AllocatorList factory: one 64 MiB slab, or a bigger one for a bigger request
  Slab operator()(std::size_t n) const { return Slab(std::max<std::size_t>(n, std::size_t{64} << 20)); }
};
using DevicePool = alloy::AllocatorList<Slabs>;  // bookkeeping: Mallocator (host), as device memory requires
using Buffer = alloy::device_buffer<DevicePool>;

#ifdef __CUDACC__
__global__ void saxpy_kernel(float a, const float* x, float* y, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
void saxpy(float a, const Buffer& x, Buffer& y, std::size_t n, cudaStream_t stream) {
  saxpy_kernel<<<(n + 255) / 256, 256, 0, stream>>>(a, static_cast<const float*>(x.data()),
                                                    static_cast<float*>(y.data()), n);
}
#else
// Built by a host compiler (the test example_device_pool_standin, over the CPU stand-in for the CUDA runtime): no
// kernel can run, so the host computes through copies. Every runtime call around it is the same.
void saxpy(float a, const Buffer& x, Buffer& y, std::size_t n, cudaStream_t stream) {
  std::vector<float> hx(n), hy(n);
  (void)cudaMemcpyAsync(hx.data(), x.data(), n * sizeof(float), cudaMemcpyDefault, stream);
  (void)cudaMemcpyAsync(hy.data(), y.data(), n * sizeof(float), cudaMemcpyDefault, stream);
  for (std::size_t i = 0; i < n; ++i) hy[i] = a * hx[i] + hy[i];
  (void)cudaMemcpyAsync(y.data(), hy.data(), n * sizeof(float), cudaMemcpyDefault, stream);
}
#endif

int main() {
  if (!alloy::cuda_available()) {
    const alloy::cuda_device_query q = alloy::query_cuda_devices();
    std::printf("device_pool: no CUDA device found (cudaGetDeviceCount: error %d); nothing to run\n", q.error);
    return 77;
  }
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return 1;
  int errors = 0;
  {
    DevicePool pool;
    constexpr std::size_t n = 1 << 20;
    std::vector<float> hx(n, 1.0f), hy(n, 2.0f);
    for (int round = 0; round < 10; ++round) {
      // Two buffers from the pool, filled from the host on `stream`; nothing synchronizes until the result is read.
      Buffer x(hx.data(), n * sizeof(float), stream, pool);
      Buffer y(hy.data(), n * sizeof(float), stream, pool);
      saxpy(3.0f, x, y, n, stream);
      std::vector<float> out(n);
      if (cudaMemcpyAsync(out.data(), y.data(), n * sizeof(float), cudaMemcpyDefault, stream) != cudaSuccess ||
          cudaStreamSynchronize(stream) != cudaSuccess)
        return 1;
      errors += static_cast<int>(std::count_if(out.begin(), out.end(), [](float v) { return v != 5.0f; }));
    }  // the buffers go back to the pool each round: the slab is reused, cudaMalloc ran once
    std::printf("device_pool: 10 rounds of saxpy over pooled device_buffers, %zu slab(s), %d wrong values\n",
                pool.allocator_count(), errors);
  }
  cudaStreamDestroy(stream);
  return errors == 0 ? 0 : 1;
}
