// CudaAsyncMallocator with kernels: stream-ordered reuse without synchronization while a kernel uses the memory, and
// device_buffer over it (the buffer's stream is the one the pool sees). Without a device: ALLOY_SKIP, exit 77. The
// host-side checks (release thresholds, trim) are in tests/cuda_mallocator.cpp, which also runs over the stand-in.
#include "skip.hpp"

#include <alloy/device_buffer.hpp>
#include <alloy/mallocator.hpp>

#include <cstring>
#include <vector>

#include <doctest/doctest.h>

namespace {
__global__ void fill_kernel(unsigned* p, std::size_t n, unsigned v) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{blockDim.x} * gridDim.x)
    p[i] = v;
}
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess); }
  ~Stream() { cudaStreamDestroy(s); }
};
}  // namespace

TEST_CASE("CudaAsyncMallocator: a block freed on a stream is reused by the next allocation on it, no sync") {
  Stream s;
  alloy::CudaAsyncMallocator pool;
  REQUIRE(pool.has_pool());
  CHECK(pool.release_threshold() == alloy::unbounded);
  alloy::Block a = pool.allocate(s.s, 1 << 20);
  REQUIRE(a);
  CHECK(alloy::is_aligned(a.ptr, 256));
  fill_kernel<<<32, 256, 0, s.s>>>(static_cast<unsigned*>(a.ptr), (1 << 20) / 4, 5);
  CHECK(pool.deallocate(s.s, a));
  alloy::Block b = pool.allocate(s.s, 1 << 20);  // ordered after the free on the same stream
  CHECK(b.ptr == a.ptr);
  CHECK(pool.deallocate(s.s, b));
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
  CHECK(pool.reserved_bytes() >= (1u << 20));  // unbounded threshold: kept across the sync
  CHECK(pool.trim_to(0));
  CHECK(pool.reserved_bytes() == 0);
}

TEST_CASE("device_buffer<CudaAsyncMallocator>: allocates and frees on the buffer's stream") {
  Stream s1, s2;
  alloy::CudaAsyncMallocator pool;
  void* first = nullptr;
  {
    alloy::device_buffer<alloy::CudaAsyncMallocator> b(1 << 20, s1.s, pool);
    first = b.data();
    fill_kernel<<<32, 256, 0, s1.s>>>(static_cast<unsigned*>(b.data()), (1 << 20) / 4, 9);
    alloy::device_buffer<alloy::Mallocator> h(b, s1.s);
    REQUIRE(cudaStreamSynchronize(s1.s) == cudaSuccess);
    CHECK(static_cast<const unsigned*>(h.data())[12345] == 9);
  }  // freed on s1
  {
    alloy::device_buffer<alloy::CudaAsyncMallocator> c(1 << 20, s1.s, pool);
    CHECK(c.data() == first);  // stream-ordered reuse on s1, no synchronization
    REQUIRE(cudaStreamSynchronize(s1.s) == cudaSuccess);  // the caller orders s2 after s1 (nothing synchronizes)
    c.resize(2 << 20, s2.s);   // now on s2: allocated, copied and the old block freed on s2
    CHECK(c.stream() == alloy::stream_view(s2.s));
  }
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(cudaGetLastError() == cudaSuccess);
}
