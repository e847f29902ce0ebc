// A stream-ordered device pool feeding device_buffers from two streams: SharedStreamOrdered over an AllocatorList of
// BitmappedBlocks over CudaMallocator.
//
// Each BitmappedBlock takes one 64 MiB slab from cudaMalloc and hands out 256-byte blocks from it; its bitmap lives
// on the host (the memory-space rule: the payload is device memory, the host never touches it). The list adds a slab
// when the ones it has are full. SharedStreamOrdered makes the whole stack stream-ordered, as RMM's pools are: a
// buffer destroyed while its kernels are still queued goes on its stream's free list, the next buffer on that
// stream reuses it at once (stream order makes that safe), and another stream takes it only behind an event. So the
// host never synchronizes to recycle memory, and after warm-up a buffer costs no CUDA call at all.
//
// Without a GPU the program says so and exits 77 (ctest: skipped). Built by a host compiler over the CPU stand-in
// for the CUDA runtime (example_device_pool_standin), the kernel runs on the host through copies.
#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/cuda_mallocator.hpp>
#include <alloy/device_buffer.hpp>
#include <alloy/stream_ordered.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

using Slab = alloy::BitmappedBlock<256, 256, alloy::CudaMallocator>;
struct Slabs {  // the AllocatorList factory: one 64 MiB slab, or a bigger one for a bigger request
  Slab operator()(std::size_t n) const { return Slab(std::max<std::size_t>(n, std::size_t{64} << 20)); }
};
// Bookkeeping on the host (the list's default, Mallocator), free lists per stream, a mutex for many host threads.
using DevicePool = alloy::SharedStreamOrdered<alloy::AllocatorList<Slabs>>;
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
  cudaStream_t streams[2] = {};
  for (auto& s : streams)
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return 1;
  int errors = 0;
  std::size_t slabs = 0, cached = 0;
  {
    DevicePool pool;
    constexpr std::size_t n = 1 << 20;
    std::vector<float> hx(n, 1.0f), hy(n, 2.0f);
    std::vector<std::vector<float>> out(2, std::vector<float>(n));
    for (int round = 0; round < 10; ++round) {
      for (int k = 0; k < 2; ++k) {  // both streams at once: nothing waits for the other stream
        cudaStream_t stream = streams[(round + k) % 2];  // each buffer's memory changes streams from round to round
        Buffer x(hx.data(), n * sizeof(float), stream, pool);
        Buffer y(hy.data(), n * sizeof(float), stream, pool);
        saxpy(3.0f, x, y, n, stream);
        if (cudaMemcpyAsync(out[k].data(), y.data(), n * sizeof(float), cudaMemcpyDefault, stream) != cudaSuccess)
          return 1;
      }  // x and y go back to their stream's free list with the kernel maybe still running: no synchronization
      for (auto s : streams)
        if (cudaStreamSynchronize(s) != cudaSuccess) return 1;
      for (const auto& o : out)
        errors += static_cast<int>(std::count_if(o.begin(), o.end(), [](float v) { return v != 5.0f; }));
    }
    slabs = pool.parent().allocator_count();
    cached = pool.cached_bytes();
  }  // the pool synchronizes the streams that hold cached blocks, then gives everything back
  std::printf("device_pool: 10 rounds of saxpy on 2 streams over a stream-ordered pool: %zu slab(s), %zu KiB "
              "cached at the end, %d wrong values\n", slabs, cached >> 10, errors);
  for (auto s : streams) cudaStreamDestroy(s);
  return errors == 0 ? 0 : 1;
}
